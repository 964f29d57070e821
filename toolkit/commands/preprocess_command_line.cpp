#include "toolkit/commands/preprocess_command_line.h"

#include <ostream>

#include "toolkit/commands/task_command_line.h"
#include "toolkit/commands/task_command_set.h"
#include "toolkit/core/error.h"

namespace po = boost::program_options;

namespace csan::commands {

int run_preprocess(const std::vector<std::string>& args, const CommandStreams& io) {
  try {
    po::options_description own("Usage: csan-preprocess [--task NAME] --trainpref PREFIX --destdir DIR [options]");
    own.add_options()("help,h", "show this help");
    add_task_option(own);
    const TaskCommandLine line(args, own);
    const TaskCommandSet tasks(&TaskCommands::preprocess);
    if (line.own().count("help")) {
      io.out << task_help(own, tasks.sections());
      return 0;
    }
    const std::string task = line.own()["task"].as<std::string>();
    TaskCommand& command = tasks.get(task);
    const auto given =
        line.parse(command.options(), command.positional(), "--task " + task, tasks.sections_except(task));
    return command.run(given, io);
  } catch (const po::error& e) {
    throw Error(e.what(), ErrorKind::bad_option);
  }
}

}  // namespace csan::commands
