// csan-preprocess's command line after the program name, as a library call shared by the
// executable and the Python package's csan.preprocess: --task picks the task's command,
// which parses its options and writes the data directory.
#pragma once

#include <string>
#include <vector>

#include "toolkit/commands/task_command.h"

namespace csan::commands {

// Returns the exit status (--help writes the options to io.out). A bad option is a
// csan::Error of kind bad_option carrying boost's one-line message.
int run_preprocess(const std::vector<std::string>& args, const CommandStreams& io);

}  // namespace csan::commands
