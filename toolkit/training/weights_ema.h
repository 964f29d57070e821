// An exponential moving average of the weights (fairseq's EMA, --store-ema): an fp32
// copy of every trained parameter, updated after each optimizer update as
//   ema = decay * ema + (1 - decay) * param     (update >= ema.ema_start_update)
//   ema = param                                 (earlier updates: fairseq's decay 0)
// every ema.ema_update_freq updates. It averages the fp32 weights the optimizer steps
// (the master copies under bf16/fp16), as fairseq's ema_fp32. Checkpoints keep it as the
// section "ema" (format 3: tensors "section.ema.NAME", NAME a parameter's name), beside
// the raw weights; csan-generate --use-ema loads it into the model.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/config.h"

namespace csan::training {

struct EmaOptions {
  bool enabled = false;  // ema.store_ema
  double decay = 0.9999;
  int64_t start_update = 0;
  int64_t update_freq = 1;
  bool validate_with_ema = false;
  // ema.ema_seed_model: the EMA starts as this checkpoint's EMA weights instead of the
  // weights trained (fairseq's --ema-seed-model); "" for none.
  std::string seed_model;
};

void declare_ema_options(core::ConfigSchema& schema);
// Throws csan::Error naming ema.ema_decay for a decay of 0 (the schema bounds it to [0, 1]),
// ema.validate_with_ema or ema.ema_seed_model without ema.store_ema, and naming
// ema.ema_seed_model for a file that does not exist.
EmaOptions ema_options(const core::Config& cfg);

class WeightsEma {
 public:
  // Starts as an fp32 copy of `weights` (the optimizer's parameters, named by `names`), or
  // as options.seed_model's EMA. Throws csan::Error naming that file when it has no EMA
  // or one of another model.
  WeightsEma(const EmaOptions& options, std::vector<std::string> names, const std::vector<torch::Tensor>& weights);

  // After update number `num_updates` (counted from 1) of `weights`.
  void step(const std::vector<torch::Tensor>& weights, int64_t num_updates);
  // Restarts from `weights` (a checkpoint without EMA, or a fine-tuning start), or from
  // options.seed_model's EMA when there is one.
  void restart(const std::vector<torch::Tensor>& weights);

  void save(checkpoint::SectionWriter& section) const;
  // Throws csan::Error naming the section for a missing parameter or another shape.
  void load(const checkpoint::SectionReader& section);

  // Copies the average into `params` (same order as the weights); returns their values
  // before, for restore().
  std::vector<torch::Tensor> swap_into(const std::vector<torch::Tensor>& params) const;
  static void restore(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& saved);

  const std::vector<torch::Tensor>& averages() const { return averages_; }

 private:
  void reset_to(const std::vector<torch::Tensor>& weights);
  void load_seed();

  EmaOptions options_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> averages_;  // fp32, on the weights' device
};

// Copies the "ema" section of `reader` into `model`'s parameters (csan-generate --use-ema).
// Throws csan::Error naming the file when it has no EMA (trained without --store-ema).
void load_ema_weights(checkpoint::CheckpointReader& reader, torch::nn::Module& model);

}  // namespace csan::training
