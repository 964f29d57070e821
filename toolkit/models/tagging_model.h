// The tagging family: one label distribution per input position (the convoluted-
// attention PoS tagger). Its task collates named inputs, e.g. "words" [B, T] and "chars"
// [B, T, C], and reads the labels itself; padding positions are real inputs that only
// the loss and the metrics ignore.
#pragma once

#include <torch/torch.h>

#include "toolkit/models/model.h"
#include "toolkit/models/named_tensors.h"

namespace csan::models {

class TaggingModel : public Model {
 public:
  std::string family() const override { return kTagging; }
  // Logits [B, T, L] (unnormalized) over the label vocabulary.
  virtual torch::Tensor tag(const NamedTensors& input) = 0;
};

}  // namespace csan::models
