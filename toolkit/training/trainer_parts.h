// Assembles a Trainer's parts from a resolved recipe and a task: the model of the
// recipe's arch (checked against the task's family), its precision, optimizer, schedule,
// the task's criterion and the gradient sync. csan-train and bench-train build trainers
// the same way through it. Seed torch before calling: the model's initial weights are
// drawn here.
#pragma once

#include <functional>
#include <memory>

#include "toolkit/core/config.h"
#include "toolkit/training/gradient_sync.h"
#include "toolkit/training/precision.h"
#include "toolkit/training/task.h"
#include "toolkit/training/trainer.h"

namespace csan::training {

// The gradient sync for a model on `device` (LocalGradientSync or c10d).
using SyncFactory = std::function<std::unique_ptr<GradientSync>(const torch::Device& device)>;

// The model is drawn on the CPU (the same initial weights wherever it trains), then moved
// to `device` before the precision policy and the optimizer see it.
// Throws csan::Error naming model.arch when the arch's family is not the task's.
TrainerParts assemble_trainer_parts(const core::Config& cfg, const Task& task,
                                    std::unique_ptr<PrecisionPolicy> precision, const SyncFactory& make_sync,
                                    const torch::Device& device = torch::kCPU);

}  // namespace csan::training
