#include "toolkit/data/tagging_preprocess.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/data/binarizer.h"
#include "toolkit/data/preprocess_settings.h"
#include "toolkit/data/tagging_data.h"

namespace fs = std::filesystem;

namespace csan::data {

namespace {

void validate(const TaggingPreprocessOptions& o) {
  if (o.trainpref.empty()) throw Error::for_key("trainpref", "is required (PREFIX.conllu is read)");
  if (o.destdir.empty()) throw Error::for_key("destdir", "is required");
  if (o.chunk_length < 1) throw Error::for_key("chunk-length", "must be at least 1");
  if (o.word_chars < 1) throw Error::for_key("word-chars", "must be at least 1");
  if (o.standard.word_threshold < 0) throw Error::for_key("word-threshold", "must not be negative");
  if (o.standard.char_threshold < 0) throw Error::for_key("char-threshold", "must not be negative");
  if (o.protocol == VocabProtocol::kConvatt && (o.validpref.empty() || o.testpref.empty()))
    throw Error::for_key("vocab-protocol",
                         "convatt counts word types over train, dev and test: --validpref and --testpref are required");
}

nlohmann::ordered_json settings_of(const TaggingPreprocessOptions& o, const TaggingDataInfo& info) {
  nlohmann::ordered_json settings = {{"format", 1},
                                     {"task", "tagging"},
                                     {"trainpref", o.trainpref},
                                     {"validpref", o.validpref},
                                     {"testpref", o.testpref},
                                     {"word_threshold", o.standard.word_threshold},
                                     {"char_threshold", o.standard.char_threshold}};
  settings.update(tagging_info_json(info));
  return settings;
}

struct Split {
  std::string name;
  std::string path;
  std::vector<TaggedSentence> sentences;
};

TaggingSplitStats binarize(const Split& split, const TaggingVocabularies& vocabularies, const TaggingLayout& layout,
                           const std::string& dir) {
  TaggingSplitStats stats{split.name, static_cast<int64_t>(split.sentences.size()), 0, 0, 0};
  BinarizedSplit words, chars, labels;
  for (const auto& sentence : split.sentences) {
    for (const auto& chunk : encode_sentence(sentence, vocabularies, layout)) {
      const auto n = static_cast<int32_t>(chunk.words.size());
      words.ids.insert(words.ids.end(), chunk.words.begin(), chunk.words.end());
      words.sizes.push_back(n);
      chars.ids.insert(chars.ids.end(), chunk.chars.begin(), chunk.chars.end());
      chars.sizes.push_back(static_cast<int32_t>(chunk.chars.size()));
      labels.ids.insert(labels.ids.end(), chunk.labels.begin(), chunk.labels.end());
      labels.sizes.push_back(n);
      for (int32_t id : chunk.words) stats.oov_words += id == TaggingVocabulary::kOov;
      stats.words += n;
      ++stats.chunks;
    }
  }
  write_dataset(tagging_split_prefix(dir, split.name, "words"), words, static_cast<size_t>(vocabularies.words.size()));
  write_dataset(tagging_split_prefix(dir, split.name, "chars"), chars, static_cast<size_t>(vocabularies.chars.size()));
  write_dataset(tagging_split_prefix(dir, split.name, "labels"), labels,
                static_cast<size_t>(vocabularies.labels.size()));
  return stats;
}

}  // namespace

std::string TaggingPreprocessSummary::format() const {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "  vocabularies: %d words, %d characters, %d labels (<PAD> and <OOV> included)\n",
                words, chars, labels);
  out += line;
  for (const auto& s : splits) {
    std::snprintf(line, sizeof line, "  %-6s %7lld sentences, %8lld words in %7lld chunks, %6.2f%% <OOV> words\n",
                  s.split.c_str(), static_cast<long long>(s.sentences), static_cast<long long>(s.words),
                  static_cast<long long>(s.chunks), s.words ? 100.0 * double(s.oov_words) / double(s.words) : 0.0);
    out += line;
  }
  std::snprintf(line, sizeof line, "  %.1f s\n", seconds);
  return out + line;
}

TaggingPreprocessSummary preprocess_tagging(const TaggingPreprocessOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  validate(o);
  TaggingDataInfo info;
  info.column = o.column;
  info.protocol = o.protocol;
  info.layout = {o.chunk_length, o.word_chars,
                 o.protocol == VocabProtocol::kConvatt ? TaggingVocabulary::kPadSymbol : ""};
  const std::string settings = render_settings(settings_of(o, info));
  check_destination(o.destdir, settings);

  std::vector<Split> splits;
  for (const auto& [name, prefix] :
       {std::pair<std::string, std::string>{"train", o.trainpref}, {"valid", o.validpref}, {"test", o.testpref}}) {
    if (prefix.empty()) continue;
    const std::string path = prefix + ".conllu";
    splits.push_back({name, path, tagged_sentences(read_conllu(path), o.column)});
  }
  auto split_named = [&](const std::string& name) -> const std::vector<TaggedSentence>& {
    for (const auto& s : splits)
      if (s.name == name) return s.sentences;
    throw Error("no " + name + " split");
  };
  const TaggingVocabularies vocabularies =
      o.protocol == VocabProtocol::kConvatt
          ? convatt_vocabularies(split_named("train"), split_named("valid"), split_named("test"))
          : standard_vocabularies(split_named("train"), o.standard);

  AtomicDirectory out(o.destdir);
  const std::string dir = out.staging();
  TaggingPreprocessSummary summary;
  for (const auto& split : splits) summary.splits.push_back(binarize(split, vocabularies, info.layout, dir));
  vocabularies.words.save(tagging_vocabulary_path(dir, "words"));
  vocabularies.chars.save(tagging_vocabulary_path(dir, "chars"));
  vocabularies.labels.save(tagging_vocabulary_path(dir, "labels"));
  write_file_atomically((fs::path(dir) / kSettingsFile).string(), settings);
  out.commit();
  summary.words = vocabularies.words.size();
  summary.chars = vocabularies.chars.size();
  summary.labels = vocabularies.labels.size();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace csan::data
