// csan-preprocess --task translation: raw parallel text -> SentencePiece model, fairseq
// dictionaries and binarized splits (csan::data::preprocess).
#pragma once

#include <memory>

#include "toolkit/commands/task_command.h"

namespace csan::commands {

std::unique_ptr<TaskCommand> translation_preprocess_command();

}  // namespace csan::commands
