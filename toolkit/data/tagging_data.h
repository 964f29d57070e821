// A tagging data directory as csan-preprocess --task tagging writes it:
//   dict.words.txt, dict.chars.txt, dict.labels.txt   (tagging_vocabulary.h format)
//   SPLIT.words.{bin,idx}    one item per chunk: its word ids (n <= chunk_length)
//   SPLIT.chars.{bin,idx}    n x word_chars character ids per chunk, row-major
//   SPLIT.labels.{bin,idx}   n label ids per chunk
//   preprocess.json          the settings, among them the tag column, the vocabulary
//                            protocol and the layout (chunk length, characters per word,
//                            the padding word's spelling) that training and tagging need
// for SPLIT in train, valid, test (fairseq mmap indexed datasets). Torch-free.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "toolkit/data/conllu.h"
#include "toolkit/data/indexed_dataset.h"
#include "toolkit/data/tagging_protocol.h"

namespace csan::data {

struct TaggingDataInfo {
  TagColumn column = TagColumn::kUpos;
  VocabProtocol protocol = VocabProtocol::kStandard;
  TaggingLayout layout;
};

// DIR/dict.NAME.txt for NAME in words, chars, labels.
std::string tagging_vocabulary_path(const std::string& dir, const std::string& name);
// DIR/SPLIT.FIELD (FIELD: words, chars, labels), the prefix of an indexed dataset.
std::string tagging_split_prefix(const std::string& dir, const std::string& split, const std::string& field);
bool tagging_split_exists(const std::string& dir, const std::string& split);

// The info of DIR/preprocess.json; throws csan::Error naming the file (and the field)
// when it is missing, malformed or was not written by csan-preprocess --task tagging.
TaggingDataInfo read_tagging_data_info(const std::string& dir);

// The info as preprocess.json holds it (key order of tagging_info_fields).
nlohmann::ordered_json tagging_info_json(const TaggingDataInfo& info);

// The same info as the (key, value) text pairs a checkpoint stores, and back.
std::vector<std::pair<std::string, std::string>> tagging_info_fields(const TaggingDataInfo& info);
TaggingDataInfo tagging_info_from_fields(const std::vector<std::pair<std::string, std::string>>& fields,
                                         const std::string& origin);

// One binarized split, memory-mapped.
class TaggingSplit {
 public:
  // Throws csan::Error naming the file for a missing or inconsistent dataset.
  TaggingSplit(const std::string& dir, const std::string& split, const TaggingLayout& layout);

  size_t size() const { return words_->size(); }
  // Words per chunk.
  const std::vector<int32_t>& lengths() const { return words_->sizes(); }
  std::vector<int64_t> words(size_t i) const { return words_->get(i); }
  std::vector<int64_t> chars(size_t i) const { return chars_->get(i); }
  std::vector<int64_t> labels(size_t i) const { return labels_->get(i); }
  int64_t word_count() const;  // real (unpadded) words of every chunk

 private:
  std::unique_ptr<MMapIndexedDataset> words_, chars_, labels_;
};

}  // namespace csan::data
