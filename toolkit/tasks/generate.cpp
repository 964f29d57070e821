#include "toolkit/tasks/generate.h"

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/nn/compute_threads.h"
#include "toolkit/tasks/task_registry.h"

namespace csan::tasks {

void run_generate(const generation::GenerateOptions& options, std::ostream& out, std::ostream& log) {
  if (options.paths.empty()) throw Error("--path: no checkpoint given");
  nn::use_compute_threads(options.threads);
  checkpoint::CheckpointReader first(options.paths[0]);
  const std::string& task = first.meta().task;
  if (!task_registry().contains(task))
    throw Error(options.paths[0] + ": written by task '" + task +
                "', which this csan does not have (known: " + task_registry().known() + ")");
  task_registry().get(task).generate(options, first, out, log);
}

}  // namespace csan::tasks
