// csan-preprocess --task tagging as a library call: CoNLL-U splits in (PREFIX.conllu),
// a tagging data directory out (layout: tagging_data.h; protocols: tagging_protocol.h).
// The directory is built under a temporary name and renamed into place at the end; a
// rerun with the same settings rebuilds it, with other settings it is refused.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toolkit/data/conllu.h"
#include "toolkit/data/tagging_protocol.h"

namespace csan::data {

struct TaggingPreprocessOptions {
  // PREFIX.conllu is read; train is required, valid and test are optional (both are
  // required by the convatt protocol, which counts words over all three).
  std::string trainpref, validpref, testpref;
  std::string destdir;
  TagColumn column = TagColumn::kUpos;
  VocabProtocol protocol = VocabProtocol::kStandard;
  StandardVocabularyOptions standard;  // standard protocol only
  int64_t chunk_length = 60;
  int64_t word_chars = 20;
};

struct TaggingSplitStats {
  std::string split;
  int64_t sentences = 0, words = 0, chunks = 0;
  int64_t oov_words = 0;  // mapped to <OOV>
};

struct TaggingPreprocessSummary {
  std::vector<TaggingSplitStats> splits;
  int words = 0, chars = 0, labels = 0;  // vocabulary sizes, <PAD> and <OOV> included
  double seconds = 0;
  std::string format() const;  // the lines csan-preprocess prints
};

// Throws csan::Error naming the file and line (malformed CoNLL-U) or the option.
TaggingPreprocessSummary preprocess_tagging(const TaggingPreprocessOptions& options);

}  // namespace csan::data
