#include "toolkit/training/weights_ema.h"

#include <filesystem>

#include "toolkit/checkpoint/optimizer_state.h"
#include "toolkit/core/error.h"
#include "toolkit/training/optimizer.h"

namespace csan::training {

void declare_ema_options(core::ConfigSchema& s) {
  s.add_bool("ema.store_ema", false, "keep an exponential moving average of the weights (fairseq's --store-ema)");
  s.add_double("ema.ema_decay", 0.9999, "EMA decay, in (0, 1]: ema = decay * ema + (1 - decay) * weights", 0.0, 1.0);
  s.add_int("ema.ema_start_update", 0, "the EMA copies the weights until this update, then averages", 0);
  s.add_int("ema.ema_update_freq", 1, "update the EMA every N updates", 1);
  s.add_bool("ema.validate_with_ema", false,
             "validate (and choose checkpoint_best.pt) with the EMA weights instead of the raw ones");
  s.add_string("ema.ema_seed_model", "",
               "start the EMA as this checkpoint's EMA weights (when it does not come from the checkpoint resumed; "
               "\"\": as the weights trained)");
}

EmaOptions ema_options(const core::Config& cfg) {
  EmaOptions o;
  o.enabled = cfg.get<bool>("ema.store_ema");
  o.decay = cfg.get<double>("ema.ema_decay");
  o.start_update = cfg.get<int64_t>("ema.ema_start_update");
  o.update_freq = cfg.get<int64_t>("ema.ema_update_freq");
  o.validate_with_ema = cfg.get<bool>("ema.validate_with_ema");
  o.seed_model = cfg.get<std::string>("ema.ema_seed_model");
  if (o.decay <= 0)
    throw Error::for_key("ema.ema_decay", "0 is out of range (0, 1]: the average would be the weights themselves");
  if (o.validate_with_ema && !o.enabled)
    throw Error::for_key("ema.validate_with_ema", "needs ema.store_ema (--store-ema): there is no EMA to validate");
  if (!o.seed_model.empty() && !o.enabled)
    throw Error::for_key("ema.ema_seed_model", "needs ema.store_ema (--store-ema): there is no EMA to seed");
  if (!o.seed_model.empty() && !std::filesystem::exists(o.seed_model))
    throw Error::for_key("ema.ema_seed_model", o.seed_model + ": no such checkpoint");
  return o;
}

WeightsEma::WeightsEma(const EmaOptions& options, std::vector<std::string> names,
                       const std::vector<torch::Tensor>& weights)
    : options_(options), names_(std::move(names)) {
  TORCH_CHECK(names_.size() == weights.size(), "WeightsEma: one name per weight");
  for (const auto& w : weights)
    averages_.push_back(w.detach().to(torch::kFloat32, /*non_blocking=*/false, /*copy=*/true));
  if (!options_.seed_model.empty()) load_seed();
}

void WeightsEma::restart(const std::vector<torch::Tensor>& weights) {
  if (options_.seed_model.empty())
    reset_to(weights);
  else
    load_seed();
}

void WeightsEma::load_seed() {
  checkpoint::CheckpointReader seed(options_.seed_model);
  if (!seed.has_section("ema"))
    throw Error(seed.path() +
                ": has no EMA weights to seed the EMA from (ema.ema_seed_model; train it with --store-ema)");
  load(seed.section("ema"));
}

void WeightsEma::reset_to(const std::vector<torch::Tensor>& weights) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < averages_.size(); ++i) averages_[i].copy_(weights[i].detach());
}

void WeightsEma::step(const std::vector<torch::Tensor>& weights, int64_t num_updates) {
  if (num_updates % options_.update_freq != 0) return;
  if (num_updates < options_.start_update) {
    reset_to(weights);
    return;
  }
  torch::NoGradGuard no_grad;
  const double decay = options_.decay;
  for (size_t i = 0; i < averages_.size(); ++i) {
    averages_[i].mul_(decay);
    averages_[i].add_(weights[i].detach().to(torch::kFloat32), 1.0 - decay);
  }
}

void WeightsEma::save(checkpoint::SectionWriter& section) const {
  for (size_t i = 0; i < averages_.size(); ++i) section.write(names_[i], averages_[i]);
}

void WeightsEma::load(const checkpoint::SectionReader& section) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < averages_.size(); ++i) {
    const torch::Tensor saved = section.read(names_[i]);
    if (!saved.sizes().equals(averages_[i].sizes()))
      throw Error(section.where() + ": '" + names_[i] + "' has another shape than the model's");
    averages_[i].copy_(saved);
  }
}

std::vector<torch::Tensor> WeightsEma::swap_into(const std::vector<torch::Tensor>& params) const {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> saved;
  for (size_t i = 0; i < params.size(); ++i) {
    saved.push_back(params[i].detach().clone());
    params[i].detach().copy_(averages_[i]);
  }
  return saved;
}

void WeightsEma::restore(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& saved) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) params[i].detach().copy_(saved[i]);
}

void load_ema_weights(checkpoint::CheckpointReader& reader, torch::nn::Module& model) {
  if (!reader.has_section("ema"))
    throw Error(reader.path() + ": has no EMA weights (train with --store-ema to keep them)");
  const auto params = unique_parameters(model);
  WeightsEma ema(EmaOptions{}, checkpoint::unique_parameter_names(model), params);
  ema.load(reader.section("ema"));
  ema.swap_into(params);
}

}  // namespace csan::training
