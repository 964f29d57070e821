#include "toolkit/nn/init.h"

namespace csan::nn {

namespace {
thread_local int skip_depth = 0;
}  // namespace

SkipInitialization::SkipInitialization() { ++skip_depth; }
SkipInitialization::~SkipInitialization() { --skip_depth; }
bool initialization_skipped() { return skip_depth > 0; }

void init_xavier_uniform(torch::Tensor t, double gain) {
  if (skip_depth) return;
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(t, gain);
}

void init_normal(torch::Tensor t, double std) {
  if (skip_depth) return;
  torch::NoGradGuard no_grad;
  t.normal_(0.0, std);
}

void init_uniform(torch::Tensor t, double low, double high) {
  if (skip_depth) return;
  torch::NoGradGuard no_grad;
  t.uniform_(low, high);
}

void init_constant(torch::Tensor t, double value) {
  if (skip_depth) return;
  torch::NoGradGuard no_grad;
  t.fill_(value);
}

}  // namespace csan::nn
