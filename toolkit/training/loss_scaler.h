// Dynamic loss scaling for fp16 training, with fairseq's semantics: the loss is
// multiplied by the scale before backward; an update whose gradient norm is inf/nan is
// skipped and the scale divided by 2 (once the share of overflowing updates since the
// last rescale reaches the tolerance; never below the threshold); after scale_window
// updates without overflow the scale doubles. Falling to min_loss_scale stops training.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>

#include "toolkit/checkpoint/section.h"

namespace csan::training {

struct LossScalerOptions {
  double init_scale = 128.0;
  double scale_factor = 2.0;
  int64_t scale_window = 2000;
  double tolerance = 0.0;
  std::optional<double> threshold;  // the scale never drops below this
  double min_loss_scale = 1e-4;
};

class DynamicLossScaler {
 public:
  explicit DynamicLossScaler(LossScalerOptions options = {});

  double loss_scale() const { return scale_; }
  // Returns whether grad_norm overflowed (the update must then be skipped), adjusting the
  // scale. Throws csan::Error when the scale would reach min_loss_scale (the scale is
  // left as it was).
  bool check_overflow(double grad_norm);
  // After an update that was applied: grows the scale after scale_window clean updates.
  void update();

  // The scale and the counters (so a resumed run rescales exactly when the original would).
  void save(checkpoint::SectionWriter& section) const;
  // Returns false (leaving the state as it is) when the section holds no scaler state,
  // e.g. resuming an fp32 or bf16 run with fp16.
  bool load(const checkpoint::SectionReader& section);

  const LossScalerOptions& options() const { return options_; }

 private:
  LossScalerOptions options_;
  double scale_;
  int64_t iter_ = 0;
  int64_t last_overflow_iter_ = -1;
  int64_t last_rescale_iter_ = -1;
  int64_t overflows_since_rescale_ = 0;
};

}  // namespace csan::training
