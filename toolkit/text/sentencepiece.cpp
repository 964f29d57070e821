#include "toolkit/text/sentencepiece.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <mutex>
#include <numeric>
#include <random>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

// Defined in SentencePiece's library but not declared in its public headers; without it
// the trainer prints hundreds of INFO lines.
namespace sentencepiece::logging {
void SetMinLogLevel(int level);
}

namespace csan::text {

namespace {

class VectorsIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorsIterator(std::vector<const std::string*> sentences) : sentences_(std::move(sentences)) {}
  bool done() const override { return next_ >= sentences_.size(); }
  void Next() override { ++next_; }
  const std::string& value() const override { return *sentences_[next_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  std::vector<const std::string*> sentences_;
  size_t next_ = 0;
};

void quiet_library() {
  static std::once_flag once;
  std::call_once(once, [] { sentencepiece::logging::SetMinLogLevel(2); });
}

}  // namespace

std::vector<size_t> sample_indices(size_t total, int64_t size, uint64_t seed) {
  std::vector<size_t> indices(total);
  std::iota(indices.begin(), indices.end(), size_t{0});
  if (size <= 0 || static_cast<uint64_t>(size) >= total) return indices;
  // Partial Fisher-Yates with mt19937_64, whose output the standard fixes, so the sample
  // is the same with every standard library.
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < static_cast<size_t>(size); ++i) {
    size_t j = i + static_cast<size_t>(rng() % (total - i));
    std::swap(indices[i], indices[j]);
  }
  indices.resize(static_cast<size_t>(size));
  std::sort(indices.begin(), indices.end());
  return indices;
}

SentencePieceModel::SentencePieceModel(std::string bytes, const std::string& origin) : bytes_(std::move(bytes)) {
  quiet_library();
  auto processor = std::make_shared<sentencepiece::SentencePieceProcessor>();
  auto status = processor->LoadFromSerializedProto(bytes_);
  if (!status.ok()) throw Error(origin + ": not a SentencePiece model: " + status.ToString());
  processor_ = std::move(processor);
}

SentencePieceModel SentencePieceModel::train(const std::vector<const std::vector<std::string>*>& sentences,
                                             const SentencePieceTrainOptions& options) {
  quiet_library();
  static const char* const kTypes[] = {"unigram", "bpe", "char", "word"};
  if (std::find(std::begin(kTypes), std::end(kTypes), options.model_type) == std::end(kTypes))
    throw Error::for_key("spm-model-type", "'" + options.model_type + "' is not one of unigram, bpe, char, word");
  if (options.vocab_size < 5) throw Error::for_key("spm-vocab-size", "must be at least 5");
  if (!(options.character_coverage > 0 && options.character_coverage <= 1))
    throw Error::for_key("spm-character-coverage", "must be in (0, 1]");

  std::vector<const std::string*> all;
  for (const auto* corpus : sentences)
    for (const auto& s : *corpus) all.push_back(&s);
  std::vector<const std::string*> chosen;
  for (size_t i : sample_indices(all.size(), options.input_sentence_size, options.seed)) chosen.push_back(all[i]);
  if (chosen.empty()) throw Error("cannot train a SentencePiece model on no sentences");
  // SentencePiece's trainer ends the process (LOG(FATAL)) when it finds no character.
  auto has_text = [](const std::string* s) { return s->find_first_not_of(" \t\n\r\f\v") != std::string::npos; };
  if (std::none_of(chosen.begin(), chosen.end(), has_text))
    throw Error("cannot train a SentencePiece model: every training sentence is empty or whitespace");

  sentencepiece::SetRandomGeneratorSeed(static_cast<unsigned>(options.seed % 0xFFFFFFFFu));
  std::string args = "--model_type=" + options.model_type + " --vocab_size=" + std::to_string(options.vocab_size) +
                     " --character_coverage=" + std::to_string(options.character_coverage) +
                     " --num_threads=1 --input_sentence_size=0 --shuffle_input_sentence=false";
  VectorsIterator iterator(std::move(chosen));
  std::string model;
  auto status = sentencepiece::SentencePieceTrainer::Train(args, &iterator, &model);
  if (!status.ok()) {
    const std::string message = status.ToString();
    // The usual cause: more pieces requested than the text can give.
    if (message.find("Vocabulary size") != std::string::npos)
      throw Error::for_key("spm-vocab-size",
                           std::to_string(options.vocab_size) + " is too large for this training text: " + message);
    throw Error("SentencePiece training failed: " + message);
  }
  return SentencePieceModel(std::move(model), "trained model");
}

SentencePieceModel SentencePieceModel::load(const std::string& path) {
  return SentencePieceModel(read_file(path), path);
}

SentencePieceModel SentencePieceModel::from_bytes(std::string bytes, const std::string& origin) {
  return SentencePieceModel(std::move(bytes), origin);
}

std::vector<std::string> SentencePieceModel::encode(std::string_view text) const {
  std::vector<std::string> pieces;
  encode(text, pieces);
  return pieces;
}

void SentencePieceModel::encode(std::string_view text, std::vector<std::string>& pieces) const {
  pieces.clear();
  auto status = processor_->Encode(absl::string_view(text.data(), text.size()), &pieces);
  if (!status.ok()) throw Error("SentencePiece encoding failed: " + status.ToString());
}

void SentencePieceModel::encode_ids(std::string_view text, std::vector<int>& ids) const {
  ids.clear();
  auto status = processor_->Encode(absl::string_view(text.data(), text.size()), &ids);
  if (!status.ok()) throw Error("SentencePiece encoding failed: " + status.ToString());
}

const std::string& SentencePieceModel::piece(int id) const {
  if (id < 0 || id >= vocab_size()) throw Error("SentencePiece id " + std::to_string(id) + " out of range");
  return processor_->IdToPiece(id);
}

int SentencePieceModel::unk_id() const { return processor_->unk_id(); }

std::string SentencePieceModel::decode(const std::vector<std::string>& pieces) const {
  std::string text;
  auto status = processor_->Decode(pieces, &text);
  if (!status.ok()) throw Error("SentencePiece decoding failed: " + status.ToString());
  return text;
}

void SentencePieceModel::save(const std::string& path) const { write_file_atomically(path, bytes_); }

int SentencePieceModel::vocab_size() const { return processor_->GetPieceSize(); }

}  // namespace csan::text
