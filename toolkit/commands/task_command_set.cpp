#include "toolkit/commands/task_command_set.h"

#include "toolkit/core/error.h"

namespace po = boost::program_options;

namespace csan::commands {

void add_task_option(po::options_description& own) {
  own.add_options()("task", po::value<std::string>()->default_value(kDefaultTask),
                    ("the task: " + task_commands().known() + " (each has its options below)").c_str());
}

TaskCommandSet::TaskCommandSet(CommandFactory TaskCommands::*executable) {
  for (const auto& name : task_commands().names())
    if (const auto& make = task_commands().get(name).*executable) commands_.emplace(name, make());
}

TaskCommand& TaskCommandSet::get(const std::string& task) const {
  auto it = commands_.find(task);
  if (it == commands_.end()) {
    std::string known;
    for (const auto& [name, command] : commands_) known += (known.empty() ? "" : ", ") + name;
    throw Error("unknown task '" + task + "'; known: " + known, ErrorKind::bad_option);
  }
  return *it->second;
}

std::vector<const po::options_description*> TaskCommandSet::sections() const { return sections_except(""); }

std::vector<const po::options_description*> TaskCommandSet::sections_except(const std::string& task) const {
  std::vector<const po::options_description*> out;
  for (const auto& [name, command] : commands_)
    if (name != task) out.push_back(&command->options());
  return out;
}

}  // namespace csan::commands
