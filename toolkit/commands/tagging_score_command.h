// csan-score --task tagging REF.conllu -i SYS.conllu [SYS2.conllu ...]: tagging accuracy
// (overall, OOV and ambiguous words) of each system, with paired bootstrap resampling
// against the first; the work is toolkit/scoring/tagging_accuracy.h and tagging_report.h.
#pragma once

#include <memory>

#include "toolkit/commands/task_command.h"

namespace csan::commands {

std::unique_ptr<TaskCommand> tagging_score_command();

}  // namespace csan::commands
