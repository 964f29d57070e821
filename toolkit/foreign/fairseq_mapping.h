// fairseq's parameter names -> csan's (tools/interop/FORMATS.md section 2): q/k/v
// projections fused into in_proj ([q; k; v]), fc1/fc2 under ffn, the untied output
// projection without ".weight"; the version markers, non-persistent buffers and the
// copies of tied matrices fairseq also stores are dropped.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "toolkit/foreign/pickle_reader.h"

namespace csan::foreign {

struct FairseqTying {
  bool share_all_embeddings = false;
  bool share_decoder_input_output_embed = false;
};

// Throws csan::Error "PATH: model.NAME: ..." when `model` (the checkpoint's "model") is not
// a dict of floating-point tensors or a q/k/v triple is incomplete or of mismatched sizes.
// `origin_names` gets the fairseq name of each csan name ("model.X", for errors).
std::map<std::string, torch::Tensor> fairseq_to_csan_names(const PickleValue& model, const FairseqTying& tying,
                                                           const std::string& path,
                                                           std::map<std::string, std::string>& origin_names);

// The same for a state dict already read (Marian's names, "model." taken off, are fairseq's).
std::map<std::string, torch::Tensor> fairseq_to_csan_names(const std::map<std::string, torch::Tensor>& model,
                                                           const FairseqTying& tying, const std::string& path,
                                                           std::map<std::string, std::string>& origin_names);

// csan's names -> fairseq's, the reverse (FORMATS.md section 7): in_proj split into its q, k
// and v rows, ffn.fc1/fc2 as fc1/fc2, the untied output projection as
// decoder.output_projection.weight, and each tied matrix under every name fairseq's strict
// load_state_dict expects (decoder.embed_tokens.weight, decoder.output_projection.weight).
// The tensors are views of csan's (tied names share one).
std::map<std::string, torch::Tensor> csan_to_fairseq_names(const std::map<std::string, torch::Tensor>& csan,
                                                           const FairseqTying& tying);

}  // namespace csan::foreign
