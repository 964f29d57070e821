// Every registered task's command of csan-preprocess or csan-score, one of them chosen by
// --task (task_command.h: the registry; task_command_line.h: the parsing).
#pragma once

#include <boost/program_options.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/commands/task_command.h"

namespace csan::commands {

// Adds --task NAME (kDefaultTask without it) to `own`.
void add_task_option(boost::program_options::options_description& own);

// Every registered task's command of one executable (&TaskCommands::preprocess or
// &TaskCommands::score), one of them chosen by --task.
class TaskCommandSet {
 public:
  explicit TaskCommandSet(CommandFactory TaskCommands::*executable);

  // Throws csan::Error "unknown task 'x'; known: a, b" for a task without this command.
  TaskCommand& get(const std::string& task) const;
  // Every section, for --help ...
  std::vector<const boost::program_options::options_description*> sections() const;
  // ... and those of the tasks other than `task`, whose options it refuses.
  std::vector<const boost::program_options::options_description*> sections_except(const std::string& task) const;

 private:
  std::map<std::string, std::unique_ptr<TaskCommand>> commands_;
};

}  // namespace csan::commands
