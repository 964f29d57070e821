#include "toolkit/training/restart_options.h"

#include "toolkit/core/error.h"

namespace csan::training {

RestartOptions restart_options(const core::Config& cfg) {
  RestartOptions o;
  o.finetune_from_model = cfg.get<std::string>("checkpoint.finetune_from_model");
  o.reset_optimizer = cfg.get<bool>("checkpoint.reset_optimizer");
  o.reset_lr_scheduler = cfg.get<bool>("checkpoint.reset_lr_scheduler");
  o.reset_dataloader = cfg.get<bool>("checkpoint.reset_dataloader");
  o.reset_meters = cfg.get<bool>("checkpoint.reset_meters");
  if (o.finetune_from_model.empty()) return o;
  if (cfg.is_set("checkpoint.restore_file"))
    throw Error::for_key("checkpoint.finetune_from_model",
                         "'" + o.finetune_from_model + "' and checkpoint.restore_file '" +
                             cfg.get<std::string>("checkpoint.restore_file") +
                             "' exclude each other (fine-tune from one checkpoint, or resume from the other)");
  for (const char* key : {"checkpoint.reset_optimizer", "checkpoint.reset_lr_scheduler", "checkpoint.reset_dataloader",
                          "checkpoint.reset_meters"})
    if (cfg.get<bool>(key))
      throw Error::for_key("checkpoint.finetune_from_model",
                           "'" + o.finetune_from_model + "' and " + key +
                               " exclude each other (fine-tuning already resets the optimizer, schedule, data "
                               "position and meters)");
  return o;
}

checkpoint::TrainingProgress restart_progress(const checkpoint::TrainingProgress& saved, const RestartOptions& o) {
  if (!o.finetune_from_model.empty()) return {};
  checkpoint::TrainingProgress p = saved;
  if (o.reset_lr_scheduler) p.lr_schedule_start = saved.num_updates;
  if (o.reset_dataloader) {
    p.epoch = 1;
    p.next_batch = 0;
  }
  if (o.reset_meters) {
    p.best_metric = 0;
    p.has_best = false;
    p.bad_validations = 0;
    p.nan_streak = 0;
  }
  return p;
}

std::string describe_resets(const RestartOptions& o) {
  std::string out;
  auto add = [&](bool on, const char* what) {
    if (on) out += (out.empty() ? "" : ", ") + std::string(what);
  };
  add(o.reset_optimizer, "optimizer");
  add(o.reset_lr_scheduler, "lr scheduler");
  add(o.reset_dataloader, "dataloader");
  add(o.reset_meters, "meters");
  return out;
}

}  // namespace csan::training
