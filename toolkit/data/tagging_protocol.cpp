#include "toolkit/data/tagging_protocol.h"

#include <algorithm>

#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"

namespace csan::data {

namespace {

using Sentences = std::vector<TaggedSentence>;

// The code points of `form` as separate UTF-8 strings (what Python's list(str) gives).
std::vector<std::string> characters(const std::string& form) {
  std::vector<std::string> out;
  for (char32_t cp : utf8::decode(form)) {
    std::string c;
    utf8::append(c, cp);
    out.push_back(std::move(c));
  }
  return out;
}

void count_words(const Sentences& sentences, FirstSeenCounter& words, FirstSeenCounter& labels) {
  for (const auto& s : sentences) {
    for (const auto& form : s.forms) words.add(form);
    for (const auto& tag : s.tags) labels.add(tag);
  }
}

void count_characters(const Sentences& sentences, FirstSeenCounter& chars) {
  for (const auto& s : sentences)
    for (const auto& form : s.forms)
      for (const auto& c : characters(form)) chars.add(c);
}

// <PAD>, <OOV>, then the counted symbols (at most `limit`, all when negative) whose count
// reaches `threshold`, most frequent first.
TaggingVocabulary vocabulary_of(const FirstSeenCounter& counts, int64_t threshold = 0, int64_t limit = -1) {
  TaggingVocabulary vocab;
  int64_t kept = 0;
  for (const auto& [symbol, count] : counts.most_common()) {
    if (limit >= 0 && kept == limit) break;
    if (count < threshold) break;  // sorted by count: the rest are rarer
    vocab.add(symbol, count);
    ++kept;
  }
  return vocab;
}

}  // namespace

std::vector<TaggedSentence> tagged_sentences(const ConllCorpus& corpus, TagColumn column) {
  std::vector<TaggedSentence> out;
  out.reserve(corpus.sentences.size());
  for (const auto& sentence : corpus.sentences) {
    TaggedSentence s;
    for (const auto& word : sentence.words) {
      s.forms.push_back(word.form);
      s.tags.push_back(word.tag(column));
    }
    out.push_back(std::move(s));
  }
  return out;
}

VocabProtocol parse_vocab_protocol(const std::string& name, const std::string& option) {
  if (name == "standard") return VocabProtocol::kStandard;
  if (name == "convatt") return VocabProtocol::kConvatt;
  throw Error::for_key(option, "'" + name + "' is not a vocabulary protocol (standard or convatt)");
}

std::string vocab_protocol_name(VocabProtocol protocol) {
  return protocol == VocabProtocol::kStandard ? "standard" : "convatt";
}

TaggingVocabularies standard_vocabularies(const Sentences& train, const StandardVocabularyOptions& options) {
  FirstSeenCounter words, labels, chars;
  count_words(train, words, labels);
  count_characters(train, chars);
  return {vocabulary_of(words, options.word_threshold), vocabulary_of(chars, options.char_threshold),
          vocabulary_of(labels)};
}

TaggingVocabularies convatt_vocabularies(const Sentences& train, const Sentences& dev, const Sentences& test) {
  FirstSeenCounter words, labels, chars;
  for (const Sentences* split : {&train, &dev, &test}) count_words(*split, words, labels);
  count_characters(train, chars);
  // The authors' get_vocabulary_char() also counts the characters of these tokens.
  for (const char* token : {"</S>", "<S>", TaggingVocabulary::kOovSymbol, TaggingVocabulary::kPadSymbol})
    for (const auto& c : characters(token)) chars.add(c);
  const auto half = static_cast<int64_t>(words.types() / 2);
  return {vocabulary_of(words, 0, half), vocabulary_of(chars), vocabulary_of(labels)};
}

std::vector<std::pair<size_t, size_t>> chunk_bounds(size_t words, int64_t chunk_length) {
  if (chunk_length < 1) throw Error("chunk length must be at least 1, got " + std::to_string(chunk_length));
  std::vector<std::pair<size_t, size_t>> out;
  const auto step = static_cast<size_t>(chunk_length);
  for (size_t begin = 0; begin < words; begin += step) out.emplace_back(begin, std::min(words, begin + step));
  return out;
}

std::vector<int32_t> word_char_ids(const std::string& form, const TaggingVocabulary& chars, int64_t word_chars) {
  std::vector<int32_t> ids(static_cast<size_t>(word_chars), TaggingVocabulary::kPad);
  const auto spelled = characters(form);
  const size_t n = std::min(spelled.size(), ids.size());
  for (size_t i = 0; i < n; ++i) ids[i] = chars.index(spelled[i]);
  return ids;
}

std::vector<int32_t> pad_word_char_ids(const TaggingLayout& layout, const TaggingVocabulary& chars) {
  return word_char_ids(layout.pad_word_spelling, chars, layout.word_chars);
}

std::vector<EncodedChunk> encode_sentence(const TaggedSentence& sentence, const TaggingVocabularies& v,
                                          const TaggingLayout& layout) {
  const bool labelled = !sentence.tags.empty();
  if (labelled && sentence.tags.size() != sentence.forms.size())
    throw Error("encode_sentence: " + std::to_string(sentence.tags.size()) + " tags for " +
                std::to_string(sentence.forms.size()) + " words");
  std::vector<EncodedChunk> chunks;
  for (const auto& [begin, end] : chunk_bounds(sentence.forms.size(), layout.chunk_length)) {
    EncodedChunk chunk;
    for (size_t i = begin; i < end; ++i) {
      chunk.words.push_back(v.words.index(sentence.forms[i]));
      const auto chars = word_char_ids(sentence.forms[i], v.chars, layout.word_chars);
      chunk.chars.insert(chunk.chars.end(), chars.begin(), chars.end());
      if (labelled) chunk.labels.push_back(v.labels.index(sentence.tags[i]));
    }
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

}  // namespace csan::data
