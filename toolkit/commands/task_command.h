// The torch-free half of each task: its part of csan-preprocess and csan-score, the two
// executables that never load LibTorch (they start at once), registered under the task's
// name. Each part declares its own options once (a section of the executable's options,
// bound to the settings it runs with) and runs with them; `--task NAME` picks the part
// (kDefaultTask without it), --help shows every task's section, and an option of another
// task is refused naming it and the task (task_command_line.h). No executable names a
// task.
//
// The torch half of the same task (its data for training, the model context, its
// csan-generate options and generation) is registered under the same name in
// toolkit/tasks/task_registry.h, which sits above the torch components; this folder
// depends only on core, text, data and scoring. Tasks register in files named
// *_commands.cpp (see CSAN_REGISTRATION_ANCHOR).
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>

#include "toolkit/core/registry.h"

namespace csan::commands {

// The task of a command line without --task, and of a recipe without task.name.
inline constexpr const char* kDefaultTask = "translation";

struct CommandStreams {
  std::istream& in;
  std::ostream& out;
  std::ostream& log;
};

// A bad command line that the executable reports with the task's usage (csan-score, as
// sacreBLEU's argparse does: the usage line, "PROGRAM: error: MESSAGE", exit 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One task's part of one executable: its section of the options, bound to the settings
// it runs with.
class TaskCommand {
 public:
  virtual ~TaskCommand() = default;
  // The one-line usage of the executable with this task.
  const std::string& usage() const { return usage_; }
  const boost::program_options::options_description& options() const { return options_; }
  // The positional arguments (csan-score's reference files).
  const boost::program_options::positional_options_description& positional() const { return positional_; }
  // Runs on the settings the parsed options were stored into (`given` tells which ones
  // the command line set). Returns the exit status; throws csan::Error (one line naming
  // the option, file or line) or UsageError.
  virtual int run(const boost::program_options::variables_map& given, const CommandStreams& io) = 0;

 protected:
  TaskCommand(std::string usage, const std::string& caption) : usage_(std::move(usage)), options_(caption) {}

  std::string usage_;
  boost::program_options::options_description options_;
  boost::program_options::positional_options_description positional_;
};

using CommandFactory = std::function<std::unique_ptr<TaskCommand>()>;

struct TaskCommands {
  std::string doc;  // one line
  CommandFactory preprocess;
  CommandFactory score;
};

core::Registry<TaskCommands>& task_commands();

}  // namespace csan::commands
