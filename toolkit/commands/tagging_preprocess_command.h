// csan-preprocess --task tagging: CoNLL-U -> tagging vocabularies and binarized chunks
// (csan::data::preprocess_tagging).
#pragma once

#include <memory>

#include "toolkit/commands/task_command.h"

namespace csan::commands {

std::unique_ptr<TaskCommand> tagging_preprocess_command();

}  // namespace csan::commands
