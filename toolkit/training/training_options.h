// Every key the trainer reads, declared in one place (with the criterion, optimizer
// and LR-schedule keys their components declare). Sections: task (the keys every task
// has), dataset, optimization, checkpoint, common, criterion, optimizer, lr_scheduler.
// The whole recipe schema (models, tasks, these) is tasks::recipe_schema().
#pragma once

#include "toolkit/core/config.h"

namespace csan::training {

// Rates, epsilons and scales end up in fp32 tensors: a value past float's range is a
// recipe error naming its key, not an overflow deep inside LibTorch (`--lr 1e300`).
inline constexpr double kMaxFloatOption = 3.4028234663852886e38;

void declare_training_options(core::ConfigSchema& schema);

}  // namespace csan::training
