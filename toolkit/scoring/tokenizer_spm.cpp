#include "toolkit/scoring/tokenizer_spm.h"

#include <sentencepiece_processor.h>

#include <vector>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {

SpmTokenizer::SpmTokenizer(const std::string& model_path, const std::string& signature)
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()), signature_(signature) {
  // Read here, so that a directory or an unreadable file is named like any other input
  // (SentencePiece's own reader reports "basic_filebuf::underflow error").
  auto status = processor_->LoadFromSerializedProto(read_file(model_path));
  if (!status.ok()) {
    throw Error(model_path + ": cannot load SentencePiece model: " + status.ToString(), ErrorKind::bad_input);
  }
}

SpmTokenizer::~SpmTokenizer() = default;

std::u32string SpmTokenizer::operator()(std::u32string_view line) const {
  std::vector<std::string> pieces;
  auto status = processor_->Encode(to_utf8(line), &pieces);
  if (!status.ok()) throw Error("SentencePiece encoding failed: " + status.ToString());
  std::string joined;
  for (const std::string& piece : pieces) {
    if (!joined.empty()) joined.push_back(' ');
    joined += piece;
  }
  return to_u32(joined);
}

}  // namespace csan::scoring
