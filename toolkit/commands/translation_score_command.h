// csan-score --task translation (the default): sacreBLEU 2.6.0's command line on local
// files (same option names, defaults, checks, messages and exit codes); the work is
// csan::scoring::score_run.
#pragma once

#include <memory>

#include "toolkit/commands/task_command.h"

namespace csan::commands {

std::unique_ptr<TaskCommand> translation_score_command();

}  // namespace csan::commands
