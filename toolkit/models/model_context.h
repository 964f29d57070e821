// What a model needs to know about the data, as the task reads it from its
// dictionaries: vocabulary sizes by name ("source" and "target" for translation;
// "words", "chars" and "labels" for tagging), the padding index and whether source and
// target share one dictionary. Built in one place per task (Task::model_context), for
// training and for checkpoint loading alike.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace csan::models {

struct ModelContext {
  std::map<std::string, int64_t> vocab_sizes;
  int64_t pad_index = 1;
  bool joined_dictionary = false;

  // Throws csan::Error "the data has no 'words' vocabulary (it has: source, target)".
  int64_t vocab_size(const std::string& name) const;

  // Translation's context: source and target vocabularies.
  static ModelContext translation(int64_t src_vocab_size, int64_t tgt_vocab_size, int64_t pad_index,
                                  bool joined_dictionary) {
    return {{{"source", src_vocab_size}, {"target", tgt_vocab_size}}, pad_index, joined_dictionary};
  }
};

}  // namespace csan::models
