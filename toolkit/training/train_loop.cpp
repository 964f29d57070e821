#include "toolkit/training/train_loop.h"

#include <cmath>
#include <csignal>
#include <filesystem>
#include <optional>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/directory_lock.h"
#include "toolkit/core/error.h"
#include "toolkit/data/epoch_iterator.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/nn/compute_threads.h"
#include "toolkit/nn/parameter_count.h"
#include "toolkit/training/c10d_gradient_sync.h"
#include "toolkit/training/checkpoint_manager.h"
#include "toolkit/training/distributed_setup.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/recipe_compat.h"
#include "toolkit/training/run_info.h"
#include "toolkit/training/stop_signal.h"
#include "toolkit/training/train_log.h"
#include "toolkit/training/trainer.h"
#include "toolkit/training/trainer_parts.h"
#include "toolkit/training/validation_run.h"

namespace fs = std::filesystem;

namespace csan::training {

namespace {

constexpr int64_t kMaxNonFiniteInARow = 10;

// The checkpoint to resume from: checkpoint.restore_file as given, or relative to the
// save dir; nothing when the default (checkpoint_last.pt) does not exist yet.
std::optional<std::string> restore_path(const core::Config& cfg, const std::string& save_dir) {
  const std::string restore = cfg.get<std::string>("checkpoint.restore_file");
  if (fs::exists(restore)) return restore;
  const std::string in_save_dir = (fs::path(save_dir) / restore).string();
  if (fs::path(restore).is_relative() && fs::exists(in_save_dir)) return in_save_dir;
  if (!cfg.is_set("checkpoint.restore_file")) return std::nullopt;
  throw Error::for_key("checkpoint.restore_file",
                       restore + ": no such checkpoint" +
                           (fs::path(restore).is_relative() ? " (nor " + in_save_dir + ")" : std::string()));
}

// A batch needs a bound: max_tokens or max_sentences (0 means "no limit" for one of them
// only while the other bounds it).
void check_batch_bounds(const core::Config& cfg) {
  if (cfg.get<int64_t>("dataset.max_tokens") == 0 && cfg.get<int64_t>("dataset.max_sentences") == 0)
    throw Error::for_key("dataset.max_tokens",
                         "0 (no limit) needs dataset.max_sentences > 0; with both unbounded the whole corpus would "
                         "be one batch");
}

}  // namespace

int run_training(const core::Config& cfg, Task& task, const std::string& command_line) {
  const nn::ComputeThreads threads = nn::use_compute_threads(cfg.get<int64_t>("common.threads"), "common.threads");
  // Lines for the log from components built before it (warnings); rank 0 only, once the
  // trainer knows the rank.
  std::function<void(const std::string&)> log_line = [](const std::string&) {};
  checkpoint::CheckpointMeta meta = task.checkpoint_meta();
  meta.task = task.name();
  meta.recipe_yaml = cfg.to_yaml();
  const TaskDataset& train_data = task.train_data();
  const DistributedSetup distributed = resolve_distributed_setup(cfg);
  ValidationRun validation(cfg, task, cfg.get<bool>("dataset.disable_validation") ? nullptr : task.valid_data(),
                           distributed.rank, distributed.world_size, [&](const std::string& line) { log_line(line); });
  const std::string& best_metric_name = validation.best_metric().name;

  // ---- save dir (locked against a second run; created only once the run starts) and log
  const CheckpointPolicy policy = checkpoint_policy(cfg);
  const bool no_save = cfg.get<bool>("checkpoint.no_save");
  std::unique_ptr<core::DirectoryLock> lock;
  if (distributed.rank == 0 && fs::is_directory(policy.save_dir))
    lock = std::make_unique<core::DirectoryLock>(policy.save_dir);

  // Opened (and verified) before anything is logged, so a bad checkpoint is the only
  // line a failing start prints.
  std::unique_ptr<checkpoint::CheckpointReader> resume;
  if (const auto restore = restore_path(cfg, policy.save_dir))
    resume = std::make_unique<checkpoint::CheckpointReader>(*restore);
  // convert-checkpoint's inference-only checkpoints keep no fp32 weights or optimizer.
  if (resume && !resume->meta().get("inference_precision").empty())
    throw Error(resume->path() + ": an inference-only " + resume->meta().get("inference_precision") +
                " checkpoint (convert-checkpoint); training needs the original training checkpoint");
  // A task, model or data change is refused here, before anything is logged.
  const std::string recipe_changes_since_checkpoint =
      resume ? check_resume_compatible(cfg, task, resume->meta(), resume->path()) : std::string();

  const int64_t max_update = cfg.get<int64_t>("optimization.max_update");
  const int64_t max_epoch = cfg.get<int64_t>("optimization.max_epoch");
  check_batch_bounds(cfg);
  // Data-parallel workers meet before any output; rank 0 alone logs and writes files.
  TrainLog log(cfg.get<int64_t>("common.log_interval"), max_update);
  log.set_quiet(distributed.rank != 0);

  // ---- model and trainer (the seed fixes initial weights and then dropout)
  const int64_t seed = cfg.get<int64_t>("common.seed");
  torch::manual_seed(static_cast<uint64_t>(seed));
  Trainer trainer(assemble_trainer_parts(
      cfg, task, make_precision_policy(cfg, distributed.world_size),  // scale window per world size
      [&](const torch::Device& device) -> std::unique_ptr<GradientSync> {
        if (distributed.distributed()) return std::make_unique<C10dGradientSync>(distributed, device);
        return std::make_unique<LocalGradientSync>();
      },
      nn::compute_device(cfg.get<bool>("common.cpu"), distributed.local_rank)));
  const bool master = trainer.sync().is_master();
  log_line = [&log, master](const std::string& line) {
    if (master) log.info(line);
  };
  validation.start();

  log.info(task.describe());
  log.info("model " + cfg.get<std::string>("model.arch") + ": " +
           std::to_string(nn::count_parameters(trainer.model())) + " parameters, on " +
           nn::describe_device(trainer.device()) + (trainer.device().is_cpu() ? ", " + nn::describe(threads) : ""));
  const std::string slow_precision =
      precision_speed_warning(cfg.get<std::string>("common.precision"), trainer.model().parameters().front().device());
  if (!slow_precision.empty() && master) log.info(slow_precision);
  if (distributed.distributed())
    log.info("distributed: " + std::to_string(distributed.world_size) + " workers (" + distributed.source +
             "), rendezvous " + distributed.master_addr + ":" + std::to_string(distributed.master_port) + ", " +
             std::to_string(torch::get_num_threads()) + " threads per worker");

  // ---- resume
  checkpoint::TrainingProgress progress;
  const std::optional<int64_t> resumed_at =
      resume ? std::optional<int64_t>(resume->progress().num_updates) : std::nullopt;
  if (resume) {
    trainer.load_state(*resume);
    progress = resume->progress();
    log.info("resumed from " + resume->path() + " at epoch " + std::to_string(progress.epoch) + ", update " +
             std::to_string(progress.num_updates));
    if (!recipe_changes_since_checkpoint.empty())
      log.info("recipe changes since " + resume->path() + ": " + recipe_changes_since_checkpoint);
    resume.reset();  // frees the checkpoint bytes
    // Already done (fairseq stops here too): nothing is trained, validated or written.
    if ((max_update > 0 && progress.num_updates >= max_update) || (max_epoch > 0 && progress.epoch > max_epoch)) {
      log.info("done: the checkpoint is at update " + std::to_string(progress.num_updates) + ", epoch " +
               std::to_string(progress.epoch) + " (max_update " + std::to_string(max_update) + ", max_epoch " +
               std::to_string(max_epoch) + "); nothing to train");
      return 0;
    }
    // Stopped by patience: resuming must not train past the early stop (it would move
    // checkpoint_best away from the protocol's result).
    const int64_t stopped_patience = cfg.get<int64_t>("optimization.patience");
    if (stopped_patience > 0 && progress.bad_validations >= stopped_patience) {
      log.info("done: the run stopped early (no improvement in " + std::to_string(progress.bad_validations) +
               " validations, patience " + std::to_string(stopped_patience) + "); nothing to train");
      return 0;
    }
  }

  data::BatchingOptions batching{cfg.get<int64_t>("dataset.max_tokens"), cfg.get<int64_t>("dataset.max_sentences"),
                                 cfg.get<int64_t>("dataset.required_batch_size_multiple")};
  const int rank = trainer.sync().rank(), world = trainer.sync().world_size();
  data::EpochIterator epochs(train_data.source_sizes(), train_data.target_sizes(), batching,
                             static_cast<uint64_t>(seed),
                             /*shuffle=*/true, rank, world, {progress.epoch, progress.next_batch});
  log.info("batching: max_tokens " + std::to_string(batching.max_tokens) + ", " +
           std::to_string(epochs.batches_in_epoch()) + " batches per epoch, update_freq " +
           std::to_string(cfg.get<int64_t>("optimization.update_freq")));

  // ---- the run starts: its outputs appear only now, so a start that failed leaves
  // nothing behind (no empty save dir, no empty metrics.jsonl)
  if (master) {
    fs::create_directories(policy.save_dir);
    if (!lock) lock = std::make_unique<core::DirectoryLock>(policy.save_dir);
    meta.run_info = run_info_json(cfg, command_line, distributed.world_size, nn::count_parameters(trainer.model()));
    write_file_atomically(policy.save_dir + "/run.json", meta.run_info);
    write_file_atomically(policy.save_dir + "/recipe.yaml", meta.recipe_yaml);
    log.open_outputs({policy.save_dir + "/metrics.jsonl", cfg.get<std::string>("common.tensorboard_logdir"),
                      task.name(), resumed_at});
  }

  const int64_t patience = cfg.get<int64_t>("optimization.patience");
  // Validates; updates best/patience; returns whether the metric improved.
  auto validate_and_track = [&]() {
    if (!validation.enabled()) return false;
    const ValidationResult v = validation.run(trainer);
    const bool improved = validation.record(v.metric, progress);
    if (master)
      log.validation(epochs.epoch(), trainer.num_updates(), task.valid_subset(), v.stats, progress.best_metric,
                     best_metric_name, v.metric, v.metrics);
    return improved;
  };

  auto save = [&](bool end_of_epoch, bool improved) {
    if (no_save || !master) return;
    checkpoint::TrainingProgress snapshot = progress;
    snapshot.num_updates = trainer.num_updates();
    snapshot.epoch = end_of_epoch ? epochs.epoch() + 1 : epochs.epoch();
    snapshot.next_batch = end_of_epoch ? 0 : epochs.position().next_batch;
    const auto names = checkpoint_names(policy, epochs.epoch(), trainer.num_updates(), end_of_epoch, improved);
    checkpoint::CheckpointWriter writer;
    writer.set_meta(meta);
    writer.set_progress(snapshot);
    trainer.save_state(writer);
    writer.write(policy.save_dir + "/" + names.front());
    link_checkpoint_copies(policy.save_dir, names.front(), names);
    prune_checkpoints(policy);
  };

  auto out_of_patience = [&]() { return patience > 0 && progress.bad_validations >= patience; };

  const int64_t update_freq = cfg.get<int64_t>("optimization.update_freq");
  const int64_t validate_interval = cfg.get<int64_t>("dataset.validate_interval");
  const int64_t validate_interval_updates = cfg.get<int64_t>("dataset.validate_interval_updates");
  const int64_t save_interval_updates = policy.save_interval_updates;
  StopSignalGuard signals;
  std::string stop_reason;

  while (stop_reason.empty()) {
    if (max_epoch > 0 && epochs.epoch() > max_epoch) {
      stop_reason = "reached max_epoch " + std::to_string(max_epoch);
      break;
    }
    if (epochs.end_of_epoch()) {
      log.end_epoch(epochs.epoch(), trainer.num_updates(), /*complete=*/true);
      const bool improved = epochs.epoch() % validate_interval == 0 && validate_and_track();
      if (epochs.epoch() % policy.save_interval == 0 || improved || out_of_patience() ||
          (max_epoch > 0 && epochs.epoch() >= max_epoch) || (max_update > 0 && trainer.num_updates() >= max_update))
        save(/*end_of_epoch=*/true, improved);
      if (out_of_patience()) stop_reason = "no improvement in " + std::to_string(patience) + " validations";
      if (max_update > 0 && trainer.num_updates() >= max_update)
        stop_reason = "reached max_update " + std::to_string(max_update);
      epochs.start_next_epoch();
      continue;
    }
    if (max_update > 0 && trainer.num_updates() >= max_update) {
      save(/*end_of_epoch=*/false, validate_and_track());
      stop_reason = "reached max_update " + std::to_string(max_update);
      break;
    }

    std::vector<TensorBatch> group;
    while (static_cast<int64_t>(group.size()) < update_freq && !epochs.end_of_epoch())
      group.push_back(train_data.collate(epochs.next()));
    const auto result = trainer.train_step(group);
    if (result.skipped && result.stats.sample_size > 0 && trainer.precision().scales_loss()) {
      // Expected while the loss scale settles; the scaler stops at its minimum.
      log.info("gradient overflow at update " + std::to_string(trainer.num_updates() + 1) +
               "; update skipped, loss scale now " + std::to_string(trainer.precision().loss_scale()));
    } else if (result.skipped && result.stats.sample_size > 0) {
      ++progress.nan_streak;
      log.info("warning: non-finite loss or gradient at update " + std::to_string(trainer.num_updates() + 1) +
               " (epoch " + std::to_string(epochs.epoch()) + "); update skipped");
      if (progress.nan_streak >= kMaxNonFiniteInARow)
        throw Error("stopping: " + std::to_string(kMaxNonFiniteInARow) +
                    " updates in a row had a non-finite loss or gradient (lower optimization.lr, "
                    "set optimization.clip_norm, or check the data)");
    } else if (!result.skipped) {
      progress.nan_streak = 0;
    }
    if (master) log.update(epochs.epoch(), trainer.num_updates(), result);

    if (!result.skipped && !epochs.end_of_epoch()) {
      const int64_t n = trainer.num_updates();
      const bool last = max_update > 0 && n >= max_update;
      const bool do_validate = validate_interval_updates > 0 && n % validate_interval_updates == 0 && !last;
      const bool do_save = save_interval_updates > 0 && n % save_interval_updates == 0 && !last;
      bool improved = false;
      if (do_validate) improved = validate_and_track();
      if (do_save || improved) save(/*end_of_epoch=*/false, improved);
      if (do_validate && out_of_patience())
        stop_reason = "no improvement in " + std::to_string(patience) + " validations";
    }
    if (const int signal = result.stop_signal) {  // every rank sees the same one
      save(/*end_of_epoch=*/false, false);
      log.info(std::string("stopped by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") + " at update " +
               std::to_string(trainer.num_updates()) + "; saved " + policy.save_dir +
               "/checkpoint_last.pt (run the same command again to resume)");
      return 128 + signal;
    }
  }
  log.end_epoch(epochs.epoch(), trainer.num_updates(), /*complete=*/false);
  log.info("done: " + stop_reason + "; " + std::to_string(trainer.num_updates()) + " updates" +
           (progress.has_best ? ", best valid " + best_metric_name + " " + std::to_string(progress.best_metric)
                              : std::string()));
  return 0;
}

}  // namespace csan::training
