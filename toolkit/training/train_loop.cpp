#include "toolkit/training/train_loop.h"

#include <csignal>
#include <filesystem>
#include <optional>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/blas_core_hint.h"
#include "toolkit/core/directory_lock.h"
#include "toolkit/core/error.h"
#include "toolkit/data/epoch_iterator.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/nn/compute_threads.h"
#include "toolkit/nn/parameter_count.h"
#include "toolkit/training/c10d_gradient_sync.h"
#include "toolkit/training/checkpoint_manager.h"
#include "toolkit/training/distributed_setup.h"
#include "toolkit/training/run_info.h"
#include "toolkit/training/stop_signal.h"
#include "toolkit/training/train_log.h"
#include "toolkit/training/train_start.h"
#include "toolkit/training/trainer.h"
#include "toolkit/training/trainer_parts.h"
#include "toolkit/training/validation_run.h"

namespace fs = std::filesystem;

namespace csan::training {

namespace {

constexpr int64_t kMaxNonFiniteInARow = 10;

// When a run validates, saves and stops: the recipe's keys, read once.
struct Schedule {
  int64_t max_update, max_epoch, patience, update_freq;
  int64_t validate_interval, validate_interval_updates;  // epochs; updates (0: not within epochs)
  int64_t save_interval, save_interval_updates;          // the same for checkpoints

  bool reached_max_update(int64_t updates) const { return max_update > 0 && updates >= max_update; }
  bool reached_max_epoch(int64_t epoch) const { return max_epoch > 0 && epoch >= max_epoch; }
  bool past_max_epoch(int64_t epoch) const { return max_epoch > 0 && epoch > max_epoch; }
  bool out_of_patience(const checkpoint::TrainingProgress& p) const {
    return patience > 0 && p.bad_validations >= patience;
  }
};

Schedule schedule_of(const core::Config& cfg, const CheckpointPolicy& policy) {
  return {cfg.get<int64_t>("optimization.max_update"),
          cfg.get<int64_t>("optimization.max_epoch"),
          cfg.get<int64_t>("optimization.patience"),
          cfg.get<int64_t>("optimization.update_freq"),
          cfg.get<int64_t>("dataset.validate_interval"),
          cfg.get<int64_t>("dataset.validate_interval_updates"),
          policy.save_interval,
          policy.save_interval_updates};
}

// ---- set-up

// The model and trainer; the seed fixes the initial weights and then dropout.
Trainer build_trainer(const core::Config& cfg, Task& task, const DistributedSetup& distributed) {
  torch::manual_seed(static_cast<uint64_t>(cfg.get<int64_t>("common.seed")));
  Trainer trainer(assemble_trainer_parts(
      cfg, task, make_precision_policy(cfg, distributed.world_size),  // scale window per world size
      [&](const torch::Device& device) -> std::unique_ptr<GradientSync> {
        if (distributed.distributed()) return std::make_unique<C10dGradientSync>(distributed, device);
        return std::make_unique<LocalGradientSync>();
      },
      nn::compute_device(cfg.get<bool>("common.cpu"), distributed.local_rank)));
  if (const EmaOptions ema = ema_options(cfg); ema.enabled) trainer.enable_ema(ema);
  return trainer;
}

// The first lines of every run: the task, the model and where it computes.
void log_setup(TrainLog& log, const core::Config& cfg, const Task& task, Trainer& trainer,
               const DistributedSetup& distributed, const nn::ComputeThreads& threads) {
  log.info(task.describe());
  log.info("model " + cfg.get<std::string>("model.arch") + ": " +
           std::to_string(nn::count_parameters(trainer.model())) + " parameters, on " +
           nn::describe_device(trainer.device()) + (trainer.device().is_cpu() ? ", " + nn::describe(threads) : ""));
  const std::string slow_precision =
      precision_speed_warning(cfg.get<std::string>("common.precision"), trainer.model().parameters().front().device());
  if (!slow_precision.empty() && trainer.sync().is_master()) log.info(slow_precision);
  if (const std::string hint = trainer.device().is_cpu() ? core::openblas_core_hint() : "";
      !hint.empty() && trainer.sync().is_master())
    log.info(hint);
  if (distributed.distributed())
    log.info("distributed: " + std::to_string(distributed.world_size) + " workers (" + distributed.source +
             "), rendezvous " + distributed.master_addr + ":" + std::to_string(distributed.master_port) + ", " +
             std::to_string(torch::get_num_threads()) + " threads per worker");
}

// ---- resume

// Loads the checkpoint into the trainer and returns the progress the run continues from
// (the checkpoint's, less what checkpoint.reset_* or fine-tuning reset); nullopt (logged)
// when it has nothing left to train: max_update or max_epoch reached, or stopped by
// patience (fairseq stops there too; training on would move checkpoint_best away from
// the protocol's result). Frees the checkpoint's bytes.
std::optional<checkpoint::TrainingProgress> resume(ResumePoint& from, Trainer& trainer, const Schedule& schedule,
                                                   TrainLog& log) {
  const RestartOptions& restart = from.restart;
  const bool finetune = !restart.finetune_from_model.empty();
  const checkpoint::TrainingProgress progress = restart_progress(from.reader->progress(), restart);
  trainer.load_state(*from.reader, progress,
                     {/*optimizer=*/!finetune && !restart.reset_optimizer, /*ema=*/!finetune,
                      /*rng=*/!finetune});
  if (!from.note.empty()) log.info(from.note);
  if (finetune) {
    log.info("fine-tuning from " + from.reader->path() + " (update " +
             std::to_string(from.reader->progress().num_updates) +
             "): its weights only; optimizer, lr scheduler, meters and data position start afresh");
  } else {
    const std::string resets = describe_resets(restart);
    log.info("resumed from " + from.reader->path() + " at epoch " + std::to_string(progress.epoch) + ", update " +
             std::to_string(progress.num_updates) + (resets.empty() ? std::string() : "; reset " + resets));
  }
  if (!from.recipe_changes.empty())
    log.info("recipe changes since " + from.reader->path() + ": " + from.recipe_changes);
  from.reader.reset();
  if (schedule.reached_max_update(progress.num_updates) || schedule.past_max_epoch(progress.epoch)) {
    log.info("done: the checkpoint is at update " + std::to_string(progress.num_updates) + ", epoch " +
             std::to_string(progress.epoch) + " (max_update " + std::to_string(schedule.max_update) + ", max_epoch " +
             std::to_string(schedule.max_epoch) + "); nothing to train");
    return std::nullopt;
  }
  if (schedule.out_of_patience(progress)) {
    log.info("done: the run stopped early (no improvement in " + std::to_string(progress.bad_validations) +
             " validations, patience " + std::to_string(schedule.patience) + "); nothing to train");
    return std::nullopt;
  }
  return progress;
}

// ---- the run starts: its outputs appear only now, so that a start that failed leaves
// nothing behind (no empty save dir, no empty metrics.jsonl). Rank 0 alone writes files.
void start_outputs(const core::Config& cfg, const Task& task, const CheckpointPolicy& policy,
                   std::unique_ptr<core::DirectoryLock>& lock, checkpoint::CheckpointMeta& meta,
                   const std::string& run_info, std::optional<int64_t> resumed_at, const TrainLogCallback& on_record,
                   TrainLog& log) {
  fs::create_directories(policy.save_dir);
  if (!lock) lock = std::make_unique<core::DirectoryLock>(policy.save_dir);
  meta.run_info = run_info;
  write_file_atomically(policy.save_dir + "/run.json", meta.run_info);
  write_file_atomically(policy.save_dir + "/recipe.yaml", meta.recipe_yaml);
  log.open_outputs({policy.save_dir + "/metrics.jsonl", cfg.get<std::string>("common.tensorboard_logdir"), task.name(),
                    resumed_at, on_record});
}

// ---- the loop: updates, with validation and checkpoints at the end of each epoch and
// at the recipe's update intervals, until a limit, patience or a stop signal.
class TrainingRun {
 public:
  TrainingRun(const Schedule& schedule, const CheckpointPolicy& policy, bool no_save, bool validate_with_ema,
              const Task& task, const TaskDataset& train_data, const checkpoint::CheckpointMeta& meta, Trainer& trainer,
              ValidationRun& validation, TrainLog& log, data::EpochIterator& epochs,
              checkpoint::TrainingProgress& progress)
      : schedule_(schedule),
        policy_(policy),
        no_save_(no_save),
        validate_with_ema_(validate_with_ema),
        master_(trainer.sync().is_master()),
        task_(task),
        train_data_(train_data),
        meta_(meta),
        trainer_(trainer),
        validation_(validation),
        log_(log),
        epochs_(epochs),
        progress_(progress) {}

  // Exit status: 0 at a limit or out of patience; 128 + signal after SIGINT/SIGTERM.
  int train() {
    StopSignalGuard signals;
    std::string stop_reason;
    while (stop_reason.empty()) {
      if (schedule_.past_max_epoch(epochs_.epoch())) {
        stop_reason = "reached max_epoch " + std::to_string(schedule_.max_epoch);
      } else if (epochs_.end_of_epoch()) {
        stop_reason = finish_epoch();
      } else if (schedule_.reached_max_update(trainer_.num_updates())) {
        save(/*end_of_epoch=*/false, validate());
        stop_reason = "reached max_update " + std::to_string(schedule_.max_update);
      } else {
        const UpdateResult result = update();
        stop_reason = within_epoch_checkpoints(result);
        if (result.stop_signal) return stop_by_signal(result.stop_signal);  // every rank sees the same one
      }
    }
    finish(stop_reason);
    return 0;
  }

 private:
  // Validates (on every rank) and records best/patience; returns whether the metric improved.
  bool validate() {
    if (!validation_.enabled()) return false;
    const ValidationResult v = validation_run();
    const bool improved = validation_.record(v.metric, progress_);
    if (master_)
      log_.validation(epochs_.epoch(), trainer_.num_updates(), task_.valid_subset(), v.stats, progress_.best_metric,
                      validation_.best_metric().name, v.metric, v.metrics);
    return improved;
  }

  // With ema.validate_with_ema, on the EMA weights (then the raw ones are put back).
  ValidationResult validation_run() {
    const WeightsEma* ema = trainer_.ema();
    if (!ema || !validate_with_ema_) return validation_.run(trainer_);
    const auto raw = ema->swap_into(trainer_.params());
    const ValidationResult v = validation_.run(trainer_);
    WeightsEma::restore(trainer_.params(), raw);
    return v;
  }

  void save(bool end_of_epoch, bool improved) {
    if (no_save_ || !master_) return;
    checkpoint::TrainingProgress snapshot = progress_;
    snapshot.num_updates = trainer_.num_updates();
    snapshot.epoch = end_of_epoch ? epochs_.epoch() + 1 : epochs_.epoch();
    snapshot.next_batch = end_of_epoch ? 0 : epochs_.position().next_batch;
    const auto names = checkpoint_names(policy_, epochs_.epoch(), trainer_.num_updates(), end_of_epoch, improved);
    checkpoint::CheckpointWriter writer;
    writer.set_meta(meta_);
    writer.set_progress(snapshot);
    trainer_.save_state(writer);
    writer.write(policy_.save_dir + "/" + names.front());
    link_checkpoint_copies(policy_.save_dir, names.front(), names);
    prune_checkpoints(policy_);
  }

  std::string patience_reason() const {
    return "no improvement in " + std::to_string(schedule_.patience) + " validations";
  }

  // The end of an epoch: validation, its checkpoint, then the next epoch. Returns the
  // reason to stop, "" to go on.
  std::string finish_epoch() {
    const int64_t epoch = epochs_.epoch(), updates = trainer_.num_updates();
    log_.end_epoch(epoch, updates, /*complete=*/true);
    const bool improved = epoch % schedule_.validate_interval == 0 && validate();
    if (epoch % schedule_.save_interval == 0 || improved || schedule_.out_of_patience(progress_) ||
        schedule_.reached_max_epoch(epoch) || schedule_.reached_max_update(updates))
      save(/*end_of_epoch=*/true, improved);
    std::string stop_reason;
    if (schedule_.out_of_patience(progress_)) stop_reason = patience_reason();
    if (schedule_.reached_max_update(updates))
      stop_reason = "reached max_update " + std::to_string(schedule_.max_update);
    epochs_.start_next_epoch();
    return stop_reason;
  }

  // One update on update_freq batches (fewer at the end of an epoch).
  UpdateResult update() {
    std::vector<TensorBatch> group;
    while (static_cast<int64_t>(group.size()) < schedule_.update_freq && !epochs_.end_of_epoch())
      group.push_back(train_data_.collate(epochs_.next()));
    const UpdateResult result = trainer_.train_step(group);
    watch_skipped(result);
    if (master_) log_.update(epochs_.epoch(), trainer_.num_updates(), result);
    return result;
  }

  // A skipped update is expected while the loss scale settles (the scaler stops at its
  // minimum); otherwise it had a non-finite loss or gradient, and too many in a row stop the run.
  void watch_skipped(const UpdateResult& result) {
    if (!result.skipped) {
      progress_.nan_streak = 0;
      return;
    }
    if (result.stats.sample_size == 0) return;
    if (trainer_.precision().scales_loss()) {
      log_.info("gradient overflow at update " + std::to_string(trainer_.num_updates() + 1) +
                "; update skipped, loss scale now " + std::to_string(trainer_.precision().loss_scale()));
      return;
    }
    ++progress_.nan_streak;
    log_.info("warning: non-finite loss or gradient at update " + std::to_string(trainer_.num_updates() + 1) +
              " (epoch " + std::to_string(epochs_.epoch()) + "); update skipped");
    if (progress_.nan_streak >= kMaxNonFiniteInARow)
      throw Error("stopping: " + std::to_string(kMaxNonFiniteInARow) +
                  " updates in a row had a non-finite loss or gradient (lower optimization.lr, "
                  "set optimization.clip_norm, or check the data)");
  }

  // Validation and checkpoints at the recipe's update intervals (the last update's are
  // the end of the run's). Returns the reason to stop, "" to go on.
  std::string within_epoch_checkpoints(const UpdateResult& result) {
    if (result.skipped || epochs_.end_of_epoch()) return "";
    const int64_t n = trainer_.num_updates();
    const bool last = schedule_.reached_max_update(n);
    const bool do_validate =
        schedule_.validate_interval_updates > 0 && n % schedule_.validate_interval_updates == 0 && !last;
    const bool do_save = schedule_.save_interval_updates > 0 && n % schedule_.save_interval_updates == 0 && !last;
    const bool improved = do_validate && validate();
    if (do_save || improved) save(/*end_of_epoch=*/false, improved);
    return do_validate && schedule_.out_of_patience(progress_) ? patience_reason() : "";
  }

  int stop_by_signal(int signal) {
    save(/*end_of_epoch=*/false, false);
    log_.info(std::string("stopped by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") + " at update " +
              std::to_string(trainer_.num_updates()) + "; saved " + policy_.save_dir +
              "/checkpoint_last.pt (run the same command again to resume)");
    return 128 + signal;
  }

  void finish(const std::string& stop_reason) {
    log_.end_epoch(epochs_.epoch(), trainer_.num_updates(), /*complete=*/false);
    log_.info("done: " + stop_reason + "; " + std::to_string(trainer_.num_updates()) + " updates" +
              (progress_.has_best
                   ? ", best valid " + validation_.best_metric().name + " " + std::to_string(progress_.best_metric)
                   : std::string()));
  }

  const Schedule& schedule_;
  const CheckpointPolicy& policy_;
  const bool no_save_, validate_with_ema_, master_;
  const Task& task_;
  const TaskDataset& train_data_;
  const checkpoint::CheckpointMeta& meta_;
  Trainer& trainer_;
  ValidationRun& validation_;
  TrainLog& log_;
  data::EpochIterator& epochs_;
  checkpoint::TrainingProgress& progress_;
};

}  // namespace

int run_training(const core::Config& cfg, Task& task, const std::string& command_line,
                 const TrainLogCallback& on_record) {
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

  // The save dir is locked against a second run (and created only once the run starts);
  // the resume point is opened (and verified) before anything is logged, so that a bad
  // checkpoint or recipe change is the only line a failing start prints.
  const CheckpointPolicy policy = checkpoint_policy(cfg);
  std::unique_ptr<core::DirectoryLock> lock;
  if (distributed.rank == 0 && fs::is_directory(policy.save_dir))
    lock = std::make_unique<core::DirectoryLock>(policy.save_dir);
  ResumePoint resume_point = open_resume_point(cfg, task, policy.save_dir);
  const Schedule schedule = schedule_of(cfg, policy);
  check_batch_bounds(cfg);

  // Data-parallel workers meet while the trainer is built, before any output.
  TrainLog log(cfg.get<int64_t>("common.log_interval"), schedule.max_update);
  log.set_quiet(distributed.rank != 0);
  Trainer trainer = build_trainer(cfg, task, distributed);
  const bool master = trainer.sync().is_master();
  log_line = [&log, master](const std::string& line) {
    if (master) log.info(line);
  };
  validation.start();
  log_setup(log, cfg, task, trainer, distributed, threads);

  checkpoint::TrainingProgress progress;
  std::optional<int64_t> resumed_at;
  if (resume_point.reader) {
    // A fine-tuning run starts its logs afresh; a resumed one drops records past its checkpoint.
    if (resume_point.restart.finetune_from_model.empty()) resumed_at = resume_point.reader->progress().num_updates;
    const auto resumed = resume(resume_point, trainer, schedule, log);
    if (!resumed) return 0;
    progress = *resumed;
  }

  const data::BatchingOptions batching{cfg.get<int64_t>("dataset.max_tokens"),
                                       cfg.get<int64_t>("dataset.max_sentences"),
                                       cfg.get<int64_t>("dataset.required_batch_size_multiple")};
  data::EpochIterator epochs(train_data.source_sizes(), train_data.target_sizes(), batching,
                             static_cast<uint64_t>(cfg.get<int64_t>("common.seed")),
                             /*shuffle=*/true, trainer.sync().rank(), trainer.sync().world_size(),
                             {progress.epoch, progress.next_batch});
  log.info("batching: max_tokens " + std::to_string(batching.max_tokens) + ", " +
           std::to_string(epochs.batches_in_epoch()) + " batches per epoch, update_freq " +
           std::to_string(schedule.update_freq));

  if (master)
    start_outputs(cfg, task, policy, lock, meta,
                  run_info_json(cfg, command_line, distributed.world_size, nn::count_parameters(trainer.model())),
                  resumed_at, on_record, log);
  return TrainingRun(schedule, policy, cfg.get<bool>("checkpoint.no_save"), cfg.get<bool>("ema.validate_with_ema"),
                     task, train_data, meta, trainer, validation, log, epochs, progress)
      .train();
}

}  // namespace csan::training
