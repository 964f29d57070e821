#include "toolkit/training/lr_scheduler.h"

#include <cmath>

#include "toolkit/core/error.h"
#include "toolkit/training/training_options.h"

namespace csan::training {

namespace {

// Linear warm-up from warmup_init_lr to lr, then lr / sqrt(update) scaled to be
// continuous at the end of warm-up (fairseq's inverse_sqrt).
class InverseSqrt : public LrScheduler {
 public:
  explicit InverseSqrt(const LrSchedulerSettings& s) : s_(s) {
    init_ = s.warmup_init_lr >= 0 ? s.warmup_init_lr : (s.warmup_updates > 0 ? 0.0 : s.lr);
    step_ = s.warmup_updates > 0 ? (s.lr - init_) / static_cast<double>(s.warmup_updates) : 0.0;
    decay_ = s.lr * std::sqrt(static_cast<double>(s.warmup_updates));
  }
  double lr_at(int64_t n) const override {
    if (n < s_.warmup_updates) return init_ + static_cast<double>(n) * step_;
    if (s_.warmup_updates == 0 && n == 0) return s_.lr;  // fairseq's initial value
    // fairseq: decay_factor * num_updates**-0.5, with decay_factor = lr * sqrt(warmup).
    return s_.warmup_updates > 0 ? decay_ / std::sqrt(static_cast<double>(n))
                                 : s_.lr / std::sqrt(static_cast<double>(n));
  }

 private:
  LrSchedulerSettings s_;
  double init_, step_, decay_;
};

// Constant rate with an optional linear warm-up factor (fairseq's fixed schedule).
class Fixed : public LrScheduler {
 public:
  explicit Fixed(const LrSchedulerSettings& s) : s_(s) {}
  double lr_at(int64_t n) const override {
    if (s_.warmup_updates > 0 && n < s_.warmup_updates)
      return s_.lr * static_cast<double>(n + 1) / static_cast<double>(s_.warmup_updates);
    return s_.lr;
  }

 private:
  LrSchedulerSettings s_;
};

// Linear warm-up, then cosine annealing between lr and min_lr with optional restarts
// whose period grows by t_mult and whose peak shrinks by lr_shrink (fairseq's cosine).
class Cosine : public LrScheduler {
 public:
  explicit Cosine(const LrSchedulerSettings& s) : s_(s) {
    init_ = s.warmup_init_lr >= 0 ? s.warmup_init_lr : s.min_lr;
    period_ = s.period_updates > 0 ? s.period_updates : s.max_update - s.warmup_updates;
    if (period_ <= 0)
      throw Error::for_key("lr_scheduler.period_updates",
                           "cosine needs a period: set it or optimization.max_update > warmup_updates");
    step_ = s.warmup_updates > 0 ? (s.lr - init_) / static_cast<double>(s.warmup_updates) : 0.0;
  }
  double lr_at(int64_t n) const override {
    if (n < s_.warmup_updates) return init_ + static_cast<double>(n) * step_;
    const double curr = static_cast<double>(n - s_.warmup_updates);
    const double period = static_cast<double>(period_);
    double i, t_i, t_curr;
    if (s_.t_mult != 1) {
      i = std::floor(std::log(1 - curr / period * (1 - s_.t_mult)) / std::log(s_.t_mult));
      t_i = std::pow(s_.t_mult, i) * period;
      t_curr = curr - (1 - std::pow(s_.t_mult, i)) / (1 - s_.t_mult) * period;
    } else {
      i = std::floor(curr / period);
      t_i = period;
      t_curr = curr - period * i;
    }
    const double shrink = std::pow(s_.lr_shrink, i);
    const double min_lr = s_.min_lr * shrink, max_lr = s_.lr * shrink;
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + std::cos(M_PI * t_curr / t_i));
  }

 private:
  LrSchedulerSettings s_;
  double init_, step_;
  int64_t period_;
};

template <typename T>
LrSchedulerFactory make() {
  return [](const LrSchedulerSettings& s) { return std::make_unique<T>(s); };
}

core::Registrar<LrSchedulerFactory> inverse_sqrt(lr_scheduler_registry(), "inverse_sqrt", make<InverseSqrt>());
core::Registrar<LrSchedulerFactory> fixed(lr_scheduler_registry(), "fixed", make<Fixed>());
core::Registrar<LrSchedulerFactory> cosine(lr_scheduler_registry(), "cosine", make<Cosine>());

}  // namespace

core::Registry<LrSchedulerFactory>& lr_scheduler_registry() {
  static core::Registry<LrSchedulerFactory> registry("lr scheduler");
  return registry;
}

void declare_lr_scheduler_options(core::ConfigSchema& schema) {
  schema.add_string("lr_scheduler.name", "inverse_sqrt", "learning-rate schedule", lr_scheduler_registry().names());
  schema.add_int("lr_scheduler.warmup_updates", 0, "linear warm-up updates", 0);
  schema.add_double("lr_scheduler.warmup_init_lr", -1.0,
                    "rate at update 0 of the warm-up (-1: 0 for inverse_sqrt, min_lr for cosine)", -1.0,
                    kMaxFloatOption);
  schema.add_double("lr_scheduler.min_lr", 0.0, "cosine: lowest rate", 0.0, kMaxFloatOption);
  schema.add_int("lr_scheduler.period_updates", -1, "cosine: updates per cycle (-1: max_update - warmup)", -1);
  schema.add_double("lr_scheduler.t_mult", 1.0, "cosine: period growth factor per restart", 1.0);
  schema.add_double("lr_scheduler.lr_shrink", 0.1, "cosine: peak shrink factor per restart", 0.0, 1.0);
}

LrSchedulerSettings lr_scheduler_settings(const core::Config& cfg) {
  LrSchedulerSettings s;
  s.lr = cfg.get<double>("optimization.lr");
  s.warmup_updates = cfg.get<int64_t>("lr_scheduler.warmup_updates");
  s.warmup_init_lr = cfg.get<double>("lr_scheduler.warmup_init_lr");
  s.min_lr = cfg.get<double>("lr_scheduler.min_lr");
  s.period_updates = cfg.get<int64_t>("lr_scheduler.period_updates");
  s.t_mult = cfg.get<double>("lr_scheduler.t_mult");
  s.lr_shrink = cfg.get<double>("lr_scheduler.lr_shrink");
  s.max_update = cfg.get<int64_t>("optimization.max_update");
  return s;
}

std::unique_ptr<LrScheduler> build_lr_scheduler(const std::string& name, const LrSchedulerSettings& settings) {
  return lr_scheduler_registry().get(name)(settings);
}

std::unique_ptr<LrScheduler> build_lr_scheduler(const core::Config& cfg) {
  return build_lr_scheduler(cfg.get<std::string>("lr_scheduler.name"), lr_scheduler_settings(cfg));
}

}  // namespace csan::training
