// How tagging data becomes model input: the vocabulary protocols and the encoding of a
// sentence into fixed-size chunks of word, character and label ids. Shared by
// csan-preprocess (binarizing) and csan-generate (tagging raw CoNLL-U), so both see the
// same ids. Torch-free.
//
// Protocols (csan-preprocess --vocab-protocol):
//   standard (default)  words, characters and labels from the training split only;
//                       words seen fewer than --word-threshold times (default 2) and
//                       characters fewer than --char-threshold times map to <OOV>, so the
//                       <OOV> embedding is trained; symbols by decreasing count, ties in
//                       order of first occurrence.
//   convatt             the authors' code (pdufter/convatt, data/univdep.py): word types
//                       counted over train + dev + test, the most frequent half kept
//                       (n_types // 2; ties in order of first occurrence, train first);
//                       labels over all three splits; characters of the training words
//                       plus those of the strings "</S>", "<S>", "<OOV>", "<PAD>"; the
//                       padding word is spelt "<PAD>".
// In both, <PAD> is index 0 and <OOV> index 1 of every vocabulary; sentences are cut into
// consecutive chunks of at most chunk_length words (never truncated), which the task pads
// to chunk_length with the padding word; a word is its first word_chars characters (code
// points), padded with character <PAD>.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toolkit/data/conllu.h"
#include "toolkit/data/tagging_vocabulary.h"

namespace csan::data {

struct TaggedSentence {
  std::vector<std::string> forms;
  std::vector<std::string> tags;  // empty when tagging unlabelled text
};

// The words of `corpus` with their tags from `column`.
std::vector<TaggedSentence> tagged_sentences(const ConllCorpus& corpus, TagColumn column);

enum class VocabProtocol { kStandard, kConvatt };
VocabProtocol parse_vocab_protocol(const std::string& name, const std::string& option = "vocab-protocol");
std::string vocab_protocol_name(VocabProtocol protocol);

struct TaggingVocabularies {
  TaggingVocabulary words, chars, labels;
};

struct StandardVocabularyOptions {
  int64_t word_threshold = 2;  // a training word seen fewer times maps to <OOV>
  int64_t char_threshold = 1;
};

TaggingVocabularies standard_vocabularies(const std::vector<TaggedSentence>& train,
                                          const StandardVocabularyOptions& options);
TaggingVocabularies convatt_vocabularies(const std::vector<TaggedSentence>& train,
                                         const std::vector<TaggedSentence>& dev,
                                         const std::vector<TaggedSentence>& test);

// What the model sees of a chunk besides the ids: its fixed sizes and the padding word.
struct TaggingLayout {
  int64_t chunk_length = 60;  // words per chunk (the model's t)
  int64_t word_chars = 20;    // character slots per word
  // The spelling of the padding word's characters: "<PAD>" (convatt) or "" (standard:
  // every slot is character <PAD>).
  std::string pad_word_spelling;
};

// [begin, end) word ranges of consecutive chunks of at most chunk_length words.
std::vector<std::pair<size_t, size_t>> chunk_bounds(size_t words, int64_t chunk_length);

// The word_chars character ids of `form` (its first word_chars code points, then <PAD>).
std::vector<int32_t> word_char_ids(const std::string& form, const TaggingVocabulary& chars, int64_t word_chars);

// The character ids of the padding word (layout.pad_word_spelling's, or all <PAD>).
std::vector<int32_t> pad_word_char_ids(const TaggingLayout& layout, const TaggingVocabulary& chars);

struct EncodedChunk {
  std::vector<int32_t> words;   // n ids
  std::vector<int32_t> chars;   // n x word_chars ids, row-major
  std::vector<int32_t> labels;  // n ids (empty when the sentence has no tags)
};

std::vector<EncodedChunk> encode_sentence(const TaggedSentence& sentence, const TaggingVocabularies& vocabularies,
                                          const TaggingLayout& layout);

}  // namespace csan::data
