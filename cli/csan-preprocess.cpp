// csan-preprocess [--task NAME] [the task's options]: the task's data preparation (its
// input files -> the data directory csan-train reads). Option parsing only: each task
// declares its options and does the work (toolkit/commands/task_command.h).
#include <boost/program_options.hpp>
#include <iostream>

#include "toolkit/commands/task_command_line.h"
#include "toolkit/commands/task_command_set.h"
#include "toolkit/core/error.h"
#include "toolkit/core/temporary_paths.h"

namespace po = boost::program_options;

namespace {

int body(int argc, char** argv) {
  namespace commands = csan::commands;
  po::options_description own("Usage: csan-preprocess [--task NAME] --trainpref PREFIX --destdir DIR [options]");
  own.add_options()("help,h", "show this help");
  commands::add_task_option(own);
  const commands::TaskCommandLine line(std::vector<std::string>(argv + 1, argv + argc), own);
  const commands::TaskCommandSet tasks(&commands::TaskCommands::preprocess);
  if (line.own().count("help")) {
    std::cout << commands::task_help(own, tasks.sections());
    return 0;
  }
  const std::string task = line.own()["task"].as<std::string>();
  commands::TaskCommand& command = tasks.get(task);
  const auto given = line.parse(command.options(), command.positional(), "--task " + task, tasks.sections_except(task));
  return command.run(given, {std::cin, std::cout, std::cerr});
}

}  // namespace

int main(int argc, char** argv) {
  // Ctrl-C or kill removes DEST.tmp.PID.N instead of leaving it behind (exit 130 / 143).
  csan::remove_temporaries_on_interrupt("csan-preprocess");
  return csan::run_main("csan-preprocess", body, argc, argv);
}
