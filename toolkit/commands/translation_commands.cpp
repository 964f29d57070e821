// The translation task's part of csan-preprocess and csan-score.
#include "toolkit/commands/translation_preprocess_command.h"
#include "toolkit/commands/translation_score_command.h"

CSAN_REGISTRATION_ANCHOR(translation_commands)

namespace csan::commands {

namespace {

core::Registrar<TaskCommands> translation_commands(task_commands(), "translation",
                                                   {"raw parallel text; BLEU, chrF and TER as sacreBLEU",
                                                    translation_preprocess_command, translation_score_command});

}  // namespace

}  // namespace csan::commands
