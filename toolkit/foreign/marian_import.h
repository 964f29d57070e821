// A Hugging Face MarianMT directory (OPUS-MT: config.json, model.safetensors or
// pytorch_model.bin, source.spm, target.spm, vocab.json) -> a csan checkpoint
// (csan-import's marian mode; tools/interop/FORMATS.md sections 1 and 4).
//
// csan's dictionaries put <s> <pad> </s> <unk> at ids 0-3, Marian's vocab.json puts </s> and
// <unk> first and <pad> last; the importer reorders the vocabulary (and with it the rows of
// the embedding and the final logits bias) into csan's order, the other pieces keeping theirs.
// Marian has no <s>: csan's gets a zero embedding row and a bias of -100, so it takes no
// probability (in float32) and the log-probs of every other token are Marian's.
#pragma once

#include <string>

namespace csan::foreign {

struct MarianImportOptions {
  std::string dir;                       // the model's directory
  std::string source_lang, target_lang;  // "": tokenizer_config.json's (else "src", "tgt")
};

// Throws csan::Error naming the file and field for anything it cannot import; `output` is
// written only when everything was read.
void import_marian(const MarianImportOptions& options, const std::string& output);

}  // namespace csan::foreign
