// Shared fixtures of the trainer tests: a very small EncoderDecoderModel that does not
// depend on the Transformer (embeddings, mean-pooled source, dropout so that RNG state
// matters, an output projection), the training keys with the settings the tests use,
// and deterministic batches of toy sentence pairs.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/tasks/translation_task.h"
#include "toolkit/training/criterion.h"
#include "toolkit/training/lr_scheduler.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/precision.h"
#include "toolkit/training/tensor_batch.h"

namespace csan::training::testing {

constexpr int64_t kVocab = 12, kPad = 1, kEos = 2;

class ToyModel : public models::EncoderDecoderModel {
 public:
  ToyModel(int64_t vocab, int64_t dim, double dropout) : dropout_(dropout) {
    embed_ = register_module("embed", torch::nn::Embedding(vocab, dim));
    hidden_ = register_module("hidden", torch::nn::Linear(2 * dim, dim));
    out_ = register_module("out", torch::nn::Linear(dim, vocab));
    scale_ = register_parameter("scale", torch::ones({1}));
  }
  models::EncoderOut encode(const models::NamedTensors& input) override {
    const auto& src_tokens = input.at("src_tokens");
    return {embed_(src_tokens), src_tokens.eq(kPad)};
  }
  torch::Tensor decode(const torch::Tensor& prev, const models::EncoderOut& enc, nn::IncrementalState*) override {
    const auto& memory = enc.at("encoder");
    auto keep = memory.padding_mask.logical_not().unsqueeze(-1).to(torch::kFloat);
    auto pooled = (memory.out * keep).sum(1) / keep.sum(1);
    auto x = embed_(prev);
    x = torch::cat({x, pooled.unsqueeze(1).expand_as(x)}, -1);
    x = torch::relu(hidden_(x));
    x = torch::dropout(x, dropout_, is_training());
    return out_(x) * scale_;
  }
  int64_t max_source_positions() const override { return 1024; }
  int64_t max_target_positions() const override { return 1024; }

  torch::Tensor scale_;

 private:
  double dropout_;
  torch::nn::Embedding embed_{nullptr};
  torch::nn::Linear hidden_{nullptr}, out_{nullptr};
};

// The criterion, optimizer, schedule and precision keys, with label smoothing 0.1, a
// 3-update warm-up and AdamW.
inline core::Config toy_training_config() {
  core::ConfigSchema schema;
  declare_criterion_options(schema);
  declare_optimizer_options(schema);
  declare_lr_scheduler_options(schema);
  declare_precision_options(schema);
  schema.add_double("optimization.lr", 1e-2, "lr");
  schema.add_int("optimization.max_update", 0, "max");
  schema.add_int("optimization.update_freq", 1, "update freq");
  core::Config cfg(schema);
  cfg.set("criterion.label_smoothing", 0.1);
  cfg.set("lr_scheduler.warmup_updates", int64_t{3});
  cfg.set("optimizer.name", std::string("adamw"));
  return cfg;
}

// Batch `index` of toy pairs (ids 4..11, ending with </s>): `sentences` sources of 2 to
// 1 + length_spread words, each target a learnable function of its source.
inline TensorBatch toy_batch(int index, int sentences, int length_spread = 5) {
  std::vector<std::vector<int64_t>> src, tgt;
  std::vector<int64_t> ids;
  for (int s = 0; s < sentences; ++s) {
    const int n = 2 + (index * 7 + s * 3) % length_spread;
    std::vector<int64_t> a, b;
    for (int k = 0; k < n; ++k) {
      a.push_back(4 + (index * 5 + s * 11 + k * 3) % 8);
      b.push_back(4 + (a.back() + k) % 8);
    }
    a.push_back(kEos);
    b.push_back(kEos);
    src.push_back(a);
    tgt.push_back(b);
    ids.push_back(s);
  }
  return tasks::translation_batch(data::collate_pairs(ids, src, tgt, kPad, kEos));
}

}  // namespace csan::training::testing
