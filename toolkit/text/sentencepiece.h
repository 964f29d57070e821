// SentencePiece subword models: training in-process from sentences in memory, loading
// from a file or from the serialized bytes a checkpoint embeds, encoding to pieces and
// decoding pieces back to text. Errors from the library become csan::Error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace csan::text {

struct SentencePieceTrainOptions {
  int vocab_size = 8000;
  std::string model_type = "unigram";  // unigram | bpe | char | word
  double character_coverage = 1.0;
  // Train on at most this many sentences, drawn with `seed` (0 = all of them).
  int64_t input_sentence_size = 0;
  uint64_t seed = 1;
};

class SentencePieceModel {
 public:
  // Trains on `sentences` (one vector per language for a joint model). Deterministic:
  // the sample is drawn with our own seeded generator and the trainer runs on one
  // thread, so equal inputs and options give byte-identical models.
  static SentencePieceModel train(const std::vector<const std::vector<std::string>*>& sentences,
                                  const SentencePieceTrainOptions& options);
  static SentencePieceModel load(const std::string& path);
  // `origin` names the source in error messages (a checkpoint, a file).
  static SentencePieceModel from_bytes(std::string bytes, const std::string& origin = "model");

  // Pieces of `text` ("▁the", "▁ca", "t"); pieces never contain ASCII whitespace.
  std::vector<std::string> encode(std::string_view text) const;
  void encode(std::string_view text, std::vector<std::string>& pieces) const;
  std::string decode(const std::vector<std::string>& pieces) const;
  // Vocabulary ids of `text`: faster than pieces. An unknown character sequence comes
  // back as unk_id(); encode() gives its surface text.
  void encode_ids(std::string_view text, std::vector<int>& ids) const;
  const std::string& piece(int id) const;
  int unk_id() const;

  // The serialized model (the content of a .model file).
  const std::string& bytes() const { return bytes_; }
  void save(const std::string& path) const;
  int vocab_size() const;

 private:
  SentencePieceModel(std::string bytes, const std::string& origin);

  std::string bytes_;
  std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor_;
};

// The indices of at most `size` of `total` items (all when size <= 0 or >= total),
// chosen uniformly with `seed`, in increasing order.
std::vector<size_t> sample_indices(size_t total, int64_t size, uint64_t seed);

}  // namespace csan::text
