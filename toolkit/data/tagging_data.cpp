#include "toolkit/data/tagging_data.h"

#include <filesystem>

#include "toolkit/core/error.h"
#include "toolkit/core/json_text.h"
#include "toolkit/data/indexed_dataset_format.h"
#include "toolkit/data/preprocess_settings.h"

namespace fs = std::filesystem;

namespace csan::data {

namespace {

int64_t positive(const std::string& value, const std::string& origin, const std::string& key) {
  try {
    size_t used = 0;
    const int64_t n = std::stoll(value, &used);
    if (used == value.size() && n > 0) return n;
  } catch (const std::exception&) {
  }
  throw Error(origin + ": " + key + " is not a positive integer (" + value + ")");
}

const std::string& field(const std::vector<std::pair<std::string, std::string>>& fields, const std::string& key,
                         const std::string& origin) {
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  throw Error(origin + ": no " + key + " (not tagging data written by csan-preprocess --task tagging)");
}

// The layout's counts are JSON integers in preprocess.json; the other fields are strings.
bool is_layout_count(const std::string& key) { return key == "chunk_length" || key == "word_chars"; }

}  // namespace

std::string tagging_vocabulary_path(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / ("dict." + name + ".txt")).string();
}

std::string tagging_split_prefix(const std::string& dir, const std::string& split, const std::string& field) {
  return (fs::path(dir) / (split + "." + field)).string();
}

bool tagging_split_exists(const std::string& dir, const std::string& split) {
  return fs::exists(index_path(tagging_split_prefix(dir, split, "words")));
}

std::vector<std::pair<std::string, std::string>> tagging_info_fields(const TaggingDataInfo& info) {
  return {{"tag_column", tag_column_name(info.column)},
          {"vocab_protocol", vocab_protocol_name(info.protocol)},
          {"chunk_length", std::to_string(info.layout.chunk_length)},
          {"word_chars", std::to_string(info.layout.word_chars)},
          {"pad_word_spelling", info.layout.pad_word_spelling}};
}

TaggingDataInfo tagging_info_from_fields(const std::vector<std::pair<std::string, std::string>>& fields,
                                         const std::string& origin) {
  TaggingDataInfo info;
  info.column = parse_tag_column(field(fields, "tag_column", origin), origin + ": tag_column");
  info.protocol = parse_vocab_protocol(field(fields, "vocab_protocol", origin), origin + ": vocab_protocol");
  info.layout.chunk_length = positive(field(fields, "chunk_length", origin), origin, "chunk_length");
  info.layout.word_chars = positive(field(fields, "word_chars", origin), origin, "word_chars");
  info.layout.pad_word_spelling = field(fields, "pad_word_spelling", origin);
  return info;
}

nlohmann::ordered_json tagging_info_json(const TaggingDataInfo& info) {
  nlohmann::ordered_json out;
  for (const auto& [key, value] : tagging_info_fields(info)) {
    if (is_layout_count(key))
      out[key] = std::stoll(value);
    else
      out[key] = value;
  }
  return out;
}

TaggingDataInfo read_tagging_data_info(const std::string& dir) {
  if (!fs::is_directory(dir)) throw Error(dir + ": no such data directory");
  const auto settings = read_settings(dir);
  const std::string path = (fs::path(dir) / kSettingsFile).string();
  if (!settings.contains("task"))
    throw Error(path + ": no task (not tagging data written by csan-preprocess --task tagging)");
  if (core::json_string_member(settings, "task", path) != "tagging")
    throw Error(path + ": not tagging data (written by csan-preprocess without --task tagging)");
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& [key, unused] : tagging_info_fields(TaggingDataInfo{}))
    fields.emplace_back(key, is_layout_count(key) ? std::to_string(core::json_integer_member(settings, key, path))
                                                  : core::json_string_member(settings, key, path));
  return tagging_info_from_fields(fields, path);
}

TaggingSplit::TaggingSplit(const std::string& dir, const std::string& split, const TaggingLayout& layout) {
  words_ = std::make_unique<MMapIndexedDataset>(tagging_split_prefix(dir, split, "words"));
  chars_ = std::make_unique<MMapIndexedDataset>(tagging_split_prefix(dir, split, "chars"));
  labels_ = std::make_unique<MMapIndexedDataset>(tagging_split_prefix(dir, split, "labels"));
  const std::string where = tagging_split_prefix(dir, split, "*");
  if (chars_->size() != words_->size() || labels_->size() != words_->size())
    throw Error(where + ": words, chars and labels hold different numbers of chunks");
  for (size_t i = 0; i < words_->size(); ++i) {
    const int64_t n = words_->length(i);
    if (n < 1 || n > layout.chunk_length || labels_->length(i) != n || chars_->length(i) != n * layout.word_chars)
      throw Error(where + ": chunk " + std::to_string(i) + " does not fit the layout (" +
                  std::to_string(layout.chunk_length) + " words of " + std::to_string(layout.word_chars) +
                  " characters at most)");
  }
}

int64_t TaggingSplit::word_count() const {
  int64_t n = 0;
  for (int32_t length : lengths()) n += length;
  return n;
}

}  // namespace csan::data
