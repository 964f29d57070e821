// A csan Transformer -> a Hugging Face MarianMT folder (csan-export --to marian;
// tools/interop/FORMATS.md 6(c), 6(d)): config.json, model.safetensors, source.spm,
// target.spm, vocab.json, tokenizer_config.json, special_tokens_map.json,
// generation_config.json, which transformers' MarianMTModel / MarianTokenizer
// from_pretrained and CTranslate2's transformers converter load.
//
// MarianMT expresses exactly the models csan-import --marian writes: Marian's position
// table, post-norm without final or embedding norms, one vocabulary shared by both sides
// and tied, a decoder that starts from <pad>. Anything else is refused naming the option
// (FORMATS.md section 7: a native csan Transformer exports to fairseq instead).
//
// The vocabulary goes back to OPUS-MT's order, which CTranslate2 relies on: </s>, <unk>,
// the pieces in csan's order, <pad> last. csan's <s> is left out when it is the placeholder
// csan-import gave a Marian model without one (zero embedding, logits bias -100), and kept
// as a piece otherwise.
#pragma once

#include <string>

namespace csan::foreign {

// Throws csan::Error naming the checkpoint and the option MarianMT cannot express, or the
// folder's problem; nothing is written then. `replace`: an existing non-empty folder is
// replaced.
void export_marian(const std::string& checkpoint, const std::string& out, bool replace);

}  // namespace csan::foreign
