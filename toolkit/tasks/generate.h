// csan-generate as a library call: reads which task trained the checkpoint(s) and lets
// that task generate (translation: beam search or sampling; tagging: tags).
#pragma once

#include <iosfwd>

#include "toolkit/generation/generate_run.h"

namespace csan::tasks {

// Throws csan::Error for a missing or corrupt checkpoint, checkpoints of different
// tasks in one ensemble, and whatever the task's generation refuses.
void run_generate(const generation::GenerateOptions& options, std::ostream& out, std::ostream& log);

}  // namespace csan::tasks
