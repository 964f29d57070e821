// csan-preprocess [--task NAME] [the task's options]: the task's data preparation (its
// input files -> the data directory csan-train reads). Option parsing only: each task
// declares its options and does the work (toolkit/commands/task_command.h).
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/commands/preprocess_command_line.h"
#include "toolkit/core/error.h"
#include "toolkit/core/temporary_paths.h"

namespace {

int body(int argc, char** argv) {
  return csan::commands::run_preprocess(std::vector<std::string>(argv + 1, argv + argc),
                                        {std::cin, std::cout, std::cerr});
}

}  // namespace

int main(int argc, char** argv) {
  // Ctrl-C or kill removes DEST.tmp.PID.N instead of leaving it behind (exit 130 / 143).
  csan::remove_temporaries_on_interrupt("csan-preprocess");
  return csan::run_main("csan-preprocess", body, argc, argv);
}
