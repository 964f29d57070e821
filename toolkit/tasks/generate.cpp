#include "toolkit/tasks/generate.h"

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/nn/compute_threads.h"
#include "toolkit/tasks/task_registry.h"

namespace csan::tasks {

namespace {

const TaskSpec& task_of(const checkpoint::CheckpointReader& checkpoint) {
  const std::string& task = checkpoint.meta().task;
  if (!task_registry().contains(task))
    throw Error(checkpoint.path() + ": written by task '" + task +
                "', which this csan does not have (known: " + task_registry().known() + ")");
  return task_registry().get(task);
}

}  // namespace

std::string checkpoint_task(const std::string& path) {
  checkpoint::CheckpointReader checkpoint(path);
  task_of(checkpoint);
  return checkpoint.meta().task;
}

std::map<std::string, std::unique_ptr<boost::program_options::options_description>> generate_option_sections(
    GenerateOptions& options) {
  std::map<std::string, std::unique_ptr<boost::program_options::options_description>> sections;
  for (const auto& name : task_registry().names()) sections[name] = task_registry().get(name).generate_options(options);
  return sections;
}

void run_generate(const GenerateOptions& options, std::ostream& out, std::ostream& log) {
  if (options.paths.empty()) throw Error("--path: no checkpoint given");
  nn::use_compute_threads(options.threads);
  checkpoint::CheckpointReader first(options.paths[0]);
  task_of(first).generate(options, first, out, log);
}

}  // namespace csan::tasks
