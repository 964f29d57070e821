#include "toolkit/tasks/reused_dictionaries.h"

#include <cstdio>
#include <filesystem>

#include "toolkit/core/cpu_threads.h"
#include "toolkit/core/error.h"
#include "toolkit/tasks/task_registry.h"
#include "toolkit/training/distributed_setup.h"
#include "toolkit/training/restart_options.h"
#include "toolkit/training/train_start.h"

namespace csan::tasks {

namespace {

constexpr const char* kKey = "checkpoint.reuse_dictionaries";

std::string tasks_with_dictionaries() {
  std::string names;
  for (const auto& name : task_registry().names())
    if (task_registry().get(name).rebinarize_data) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

core::Config with_reused_dictionaries(const core::Config& cfg) {
  if (!cfg.get<bool>(kKey)) return cfg;
  const std::string task = cfg.get<std::string>("task.name");
  const auto& rebinarize = task_registry().get(task).rebinarize_data;
  if (!rebinarize)
    throw Error::for_key(kKey, "task " + task + " cannot re-binarize its data with a checkpoint's dictionaries (" +
                                   tasks_with_dictionaries() + " can)");
  const training::RestartOptions restart = training::restart_options(cfg);
  const std::string save_dir = cfg.get<std::string>("checkpoint.save_dir");
  const std::string checkpoint = training::restore_path(cfg, save_dir).value_or(restart.finetune_from_model);
  if (checkpoint.empty())
    throw Error::for_key(kKey,
                         "needs a checkpoint to take the dictionaries from: --finetune-from-model CKPT or "
                         "--restore-file CKPT (" +
                             (std::filesystem::path(save_dir) / "checkpoint_last.pt").string() + " does not exist)");
  const int64_t threads = cfg.get<int64_t>("common.threads");
  const int workers = threads > 0 ? static_cast<int>(threads) : static_cast<int>(core::usable_cpu_count());
  const commands::RebinarizedData data =
      rebinarize(cfg.get<std::string>("task.data"), checkpoint,
                 (std::filesystem::path(save_dir) / kRebinarizedDataDir).string(), workers);
  if (training::resolve_distributed_setup(cfg).rank == 0) std::fprintf(stderr, "%s\n", data.note.c_str());
  core::Config out = cfg;
  out.set("task.data", core::Value(data.data_dir));
  return out;
}

}  // namespace csan::tasks
