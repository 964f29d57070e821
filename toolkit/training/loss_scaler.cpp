#include "toolkit/training/loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "toolkit/core/error.h"

namespace csan::training {

DynamicLossScaler::DynamicLossScaler(LossScalerOptions options) : options_(options), scale_(options.init_scale) {
  if (options_.scale_window < 1) throw Error::for_key("common.fp16_scale_window", "must be at least 1");
  if (!(options_.init_scale > 0)) throw Error::for_key("common.fp16_init_scale", "must be positive");
}

bool DynamicLossScaler::check_overflow(double grad_norm) {
  if (std::isfinite(grad_norm)) return false;
  const double previous = scale_;
  const int64_t iters_since_rescale = iter_ - last_rescale_iter_;  // >= 1: rescales happen before iter_ advances
  last_overflow_iter_ = iter_;
  ++overflows_since_rescale_;
  const double overflow_share =
      static_cast<double>(overflows_since_rescale_) / static_cast<double>(iters_since_rescale);
  if (overflow_share >= options_.tolerance) {
    scale_ /= options_.scale_factor;
    if (options_.threshold) scale_ = std::max(scale_, *options_.threshold);
    last_rescale_iter_ = iter_;
    overflows_since_rescale_ = 0;
  }
  if (scale_ <= options_.min_loss_scale) {
    scale_ = previous;
    std::ostringstream msg;
    msg << "minimum loss scale reached (" << options_.min_loss_scale
        << "): the loss is probably exploding; lower the learning rate, set optimization.clip_norm, "
           "or use --precision bf16";
    throw Error(msg.str());
  }
  ++iter_;
  return true;
}

void DynamicLossScaler::update() {
  if ((iter_ - last_overflow_iter_) % options_.scale_window == 0) {
    scale_ *= options_.scale_factor;
    last_rescale_iter_ = iter_;
  }
  ++iter_;
}

void DynamicLossScaler::save(checkpoint::SectionWriter& section) const {
  section.write("loss_scale", torch::tensor(scale_, torch::kDouble));
  section.write("iter", torch::tensor(iter_, torch::kLong));
  section.write("last_overflow_iter", torch::tensor(last_overflow_iter_, torch::kLong));
  section.write("last_rescale_iter", torch::tensor(last_rescale_iter_, torch::kLong));
  section.write("overflows_since_rescale", torch::tensor(overflows_since_rescale_, torch::kLong));
}

bool DynamicLossScaler::load(const checkpoint::SectionReader& section) {
  torch::Tensor probe;
  if (!section.try_read("loss_scale", probe)) return false;
  auto read = [&](const char* key) {
    const torch::Tensor t = section.read(key);
    if (t.numel() != 1) throw Error(section.where() + ": '" + key + "' is not one number");
    return t;
  };
  scale_ = read("loss_scale").item<double>();
  iter_ = read("iter").item<int64_t>();
  last_overflow_iter_ = read("last_overflow_iter").item<int64_t>();
  last_rescale_iter_ = read("last_rescale_iter").item<int64_t>();
  overflows_since_rescale_ = read("overflows_since_rescale").item<int64_t>();
  return true;
}

}  // namespace csan::training
