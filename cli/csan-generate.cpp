// csan-generate --path CKPT[:CKPT2...] [the options of the checkpoint's task]: parses the
// options and calls the generation library. Each task declares its part of the options
// and generates (toolkit/tasks/generate.h); the checkpoint's task picks the part.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/commands/task_command_line.h"
#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/checked_output.h"
#include "toolkit/core/error.h"
#include "toolkit/generation/loaded_ensemble.h"
#include "toolkit/tasks/generate.h"

namespace po = boost::program_options;

namespace {

int generate_main(int argc, char** argv) {
  namespace commands = csan::commands;
  csan::core::keep_large_allocations_mapped();  // decoding steps reuse their buffers instead of page-faulting
  csan::tasks::GenerateOptions o;
  po::options_description own("csan-generate --path CKPT[:CKPT...] [the options of the checkpoint's task]");
  own.add_options()("help,h", "show this help")("path", po::value<std::string>(),
                                                "checkpoint(s); several separated by ':' form an ensemble")(
      "threads", po::value<int64_t>(&o.threads)->default_value(0),
      "CPU threads (0: OMP_NUM_THREADS when set, else every usable CPU)");
  const auto sections = csan::tasks::generate_option_sections(o);
  std::vector<const po::options_description*> all;
  for (const auto& [task, section] : sections) all.push_back(section.get());
  try {
    const commands::TaskCommandLine line(std::vector<std::string>(argv + 1, argv + argc), own);
    if (line.own().count("help")) {
      std::cout << commands::task_help(own, all);
      return 0;
    }
    if (!line.own().count("path")) {
      line.check_known(all);
      throw csan::Error("missing --path CKPT (a checkpoint written by csan-train)");
    }
    o.paths = csan::generation::split_paths(line.own()["path"].as<std::string>());
    if (o.paths.empty()) throw csan::Error("--path: no checkpoint given");
    const std::string task = csan::tasks::checkpoint_task(o.paths[0]);
    std::vector<const po::options_description*> others;
    for (const auto& [name, section] : sections)
      if (name != task) others.push_back(section.get());
    line.parse(*sections.at(task), {}, "task " + task + " (" + o.paths[0] + " is a " + task + " checkpoint)", others);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see csan-generate --help)");
  }
  // Every write to stdout is checked: a full disk is an error, a closed pipe a quiet stop.
  csan::CheckedOutput out;
  csan::tasks::run_generate(o, out.stream(), std::cerr);
  out.close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("csan-generate", generate_main, argc, argv); }
