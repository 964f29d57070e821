// A csan Transformer -> a fairseq checkpoint folder (csan-export --to fairseq;
// tools/interop/FORMATS.md 6(a), 6(b)): checkpoint.pt, dict.SRC.txt, dict.TGT.txt and the
// SentencePiece model(s) (spm.model, or spm.SRC.model and spm.TGT.model).
//
// checkpoint.pt holds what fairseq's checkpoint_utils.load_checkpoint_to_cpu,
// load_model_ensemble_and_task and fairseq-generate need, with cfg["model"] an
// argparse.Namespace (arch, sizes, norms, positions, tying, activation, dropouts, task and
// languages) so that CTranslate2's fairseq converter (--unsafe_deserialization) reads it too;
// the weights under fairseq's names (fairseq_mapping.h) with the encoder.version and
// decoder.version markers.
#pragma once

#include <string>

namespace csan::foreign {

// Throws csan::Error naming the checkpoint and the option fairseq cannot express (Marian's
// position table, a final logits bias, a decoder that starts from <pad>) or the folder's
// problem; nothing is written then. `replace`: an existing non-empty folder is replaced.
void export_fairseq(const std::string& checkpoint, const std::string& out, bool replace);

}  // namespace csan::foreign
