// A csan checkpoint read for export (csan-export): its Transformer's options, languages,
// dictionaries, SentencePiece model(s) and float32 weights by csan's names. What no export
// format can express is refused here, naming the arch, task or option; each format's own
// limits are its writer's (fairseq_export.h, marian_export.h).
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "toolkit/models/transformer_options.h"

namespace csan::foreign {

struct ExportedModel {
  std::string path;  // the csan checkpoint, for errors
  models::TransformerOptions options;
  std::string src_lang, tgt_lang;
  std::string src_dict, tgt_dict;  // dict.txt contents
  std::string spm_model;           // source side (and target when tgt_spm_model is ""); "" if none
  std::string tgt_spm_model;       // target side when it differs
  // csan name -> float32 tensor of its own (contiguous, not a view of the checkpoint file).
  std::map<std::string, torch::Tensor> weights;
};

// `target` names the format in errors ("fairseq", "MarianMT"). Throws csan::Error
// "PATH: ..." for a checkpoint that is not a translation Transformer (CSAN, CCN, the
// locality methods, the tagger), has attention chains, or is inference-only
// (convert-checkpoint --precision int8|bf16). Attention without biases (model.attn_bias
// false) comes with zero biases, as the other formats always have them.
ExportedModel read_exported_model(const std::string& path, const std::string& target);

}  // namespace csan::foreign
