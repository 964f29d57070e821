// The tagging task's part of csan-preprocess and csan-score.
#include "toolkit/commands/tagging_preprocess_command.h"
#include "toolkit/commands/tagging_score_command.h"

CSAN_REGISTRATION_ANCHOR(tagging_commands)

namespace csan::commands {

namespace {

core::Registrar<TaskCommands> tagging_commands(task_commands(), "tagging",
                                               {"CoNLL-U tags; tagging accuracy (overall, OOV, ambiguous words)",
                                                tagging_preprocess_command, tagging_score_command});

}  // namespace

}  // namespace csan::commands
