#include "toolkit/training/trainer_parts.h"

#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/training/lr_scheduler.h"
#include "toolkit/training/optimizer.h"

namespace csan::training {

TrainerParts assemble_trainer_parts(const core::Config& cfg, const Task& task,
                                    std::unique_ptr<PrecisionPolicy> precision, const SyncFactory& make_sync,
                                    const torch::Device& device) {
  const std::string family = models::arch_family(cfg);
  if (family != task.model_family())
    throw Error::for_key("model.arch", "'" + cfg.get<std::string>("model.arch") + "' builds " + family +
                                           " models; task " + task.name() + " needs " + task.model_family() +
                                           " models");
  TrainerParts parts;
  parts.model = models::build_model(cfg, task.model_context());
  parts.model->to(device);
  parts.precision = std::move(precision);
  parts.precision->prepare_model(*parts.model);
  parts.optimizer = build_optimizer(parts.precision->optimizer_params(unique_parameters(*parts.model)), cfg);
  parts.lr_scheduler = build_lr_scheduler(cfg);
  parts.criterion = task.criterion(cfg);
  parts.sync = make_sync(parts.model->parameters().front().device());
  parts.clip_norm = cfg.get<double>("optimization.clip_norm");
  return parts;
}

}  // namespace csan::training
