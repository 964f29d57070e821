// Every key the trainer reads, declared in one place (with the criterion, optimizer
// and LR-schedule keys their components declare). Sections: task, dataset,
// optimization, checkpoint, common, criterion, optimizer, lr_scheduler.
#pragma once

#include "toolkit/core/config.h"

namespace csan::training {

void declare_training_options(core::ConfigSchema& schema);

// The schema csan-train uses: model keys (all registered architectures) + training keys.
core::ConfigSchema train_schema();

}  // namespace csan::training
