#include "toolkit/commands/task_command.h"

namespace csan::anchors {
void link_commands();
}  // namespace csan::anchors

namespace csan::commands {

core::Registry<TaskCommands>& task_commands() {
  csan::anchors::link_commands();
  static core::Registry<TaskCommands> registry("task");
  return registry;
}

}  // namespace csan::commands
