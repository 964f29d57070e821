#include "toolkit/tasks/task_registry.h"

namespace csan::anchors {
void link_tasks();
}  // namespace csan::anchors

namespace csan::tasks {

core::Registry<TaskSpec>& task_registry() {
  csan::anchors::link_tasks();
  static core::Registry<TaskSpec> registry("task");
  return registry;
}

}  // namespace csan::tasks
