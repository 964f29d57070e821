// What every model is, whatever its family: a Module the trainer, the precision policies,
// gradient sync and checkpoints work on. Families add their own interface:
// EncoderDecoderModel (encode, decode with incremental state: translation) and
// TaggingModel (one label per input position). A task and its criterion know which
// family they hold; builders say it (ArchSpec::family) before building.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>

#include "toolkit/core/error.h"
#include "toolkit/nn/attention_site.h"
#include "toolkit/nn/multihead_attention.h"

namespace csan::models {

// Family names, as ArchSpec::family and Model::family() give them.
inline constexpr const char* kEncoderDecoder = "encoder-decoder";
inline constexpr const char* kTagging = "tagging";

class Model : public torch::nn::Module {
 public:
  virtual std::string family() const = 0;
  // Visits every attention with where it sits (role, layer, heads), in a fixed order;
  // the builder installs each site's attention chain through it.
  virtual void for_each_attention(const std::function<void(const nn::AttentionSite&, nn::MultiheadAttention&)>& visit) {
    (void)visit;
  }
};

// `model` as family T (family name `family`), or a one-line csan::Error naming what
// needed it: "the translation task needs an encoder-decoder model, not a tagging model".
template <typename T>
T& as_family(Model& model, const std::string& needed_by, const std::string& family) {
  if (auto* typed = dynamic_cast<T*>(&model)) return *typed;
  throw Error(needed_by + " needs an " + family + " model, not a " + model.family() + " model");
}

}  // namespace csan::models
