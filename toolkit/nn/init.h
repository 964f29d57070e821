// Parameter initialization that can be switched off: a model about to be overwritten
// by a checkpoint (or only counted) need not pay for hundreds of millions of random
// numbers. Layers initialize through these helpers only.
#pragma once

#include <torch/torch.h>

namespace csan::nn {

// While one is alive (on this thread), the helpers below leave tensors uninitialized.
// Why a scope on the thread rather than an option passed in: layers initialize in their
// constructors (torch's module pattern), through every architecture's builder and every
// layer's options; an explicit flag would run through all of them for one saving of the
// checkpoint loader, which sets the scope around build_model alone. It changes no result
// (the checkpoint overwrites every tensor), so nothing else needs to know about it.
class SkipInitialization {
 public:
  SkipInitialization();
  ~SkipInitialization();
  SkipInitialization(const SkipInitialization&) = delete;
  SkipInitialization& operator=(const SkipInitialization&) = delete;
};
bool initialization_skipped();

void init_xavier_uniform(torch::Tensor t, double gain = 1.0);
void init_normal(torch::Tensor t, double std);
void init_uniform(torch::Tensor t, double low, double high);
void init_constant(torch::Tensor t, double value);

}  // namespace csan::nn
