// Learning-rate schedules as functions of the update count, registered by name
// ("lr_scheduler.name"), with fairseq's formulas. The schedule is stateless apart from
// the update count, which the trainer checkpoints, so resuming recomputes the same rate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"

namespace csan::training {

class LrScheduler {
 public:
  virtual ~LrScheduler() = default;
  // The rate to use for the update that follows `num_updates` completed updates
  // (fairseq's step_update(num_updates) after each update; lr_at(0) is the initial rate).
  virtual double lr_at(int64_t num_updates) const = 0;
};

struct LrSchedulerSettings {
  double lr = 5e-4;             // peak / base rate (optimization.lr)
  int64_t warmup_updates = 0;
  double warmup_init_lr = -1;   // < 0: fairseq's default (0 with warm-up, else lr)
  double min_lr = 0;            // cosine
  int64_t period_updates = -1;  // cosine: <= 0 means max_update - warmup_updates
  double t_mult = 1;            // cosine
  double lr_shrink = 0.1;       // cosine
  int64_t max_update = 0;       // cosine period default
};

using LrSchedulerFactory = std::function<std::unique_ptr<LrScheduler>(const LrSchedulerSettings&)>;
core::Registry<LrSchedulerFactory>& lr_scheduler_registry();

void declare_lr_scheduler_options(core::ConfigSchema& schema);
LrSchedulerSettings lr_scheduler_settings(const core::Config& cfg);
std::unique_ptr<LrScheduler> build_lr_scheduler(const std::string& name, const LrSchedulerSettings& settings);
std::unique_ptr<LrScheduler> build_lr_scheduler(const core::Config& cfg);

}  // namespace csan::training
