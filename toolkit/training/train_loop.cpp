#include "toolkit/training/train_loop.h"

#include <cmath>
#include <csignal>
#include <filesystem>
#include <optional>
#include <regex>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/data/epoch_iterator.h"
#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/parameter_count.h"
#include "toolkit/text/dictionary.h"
#include "toolkit/training/c10d_gradient_sync.h"
#include "toolkit/training/checkpoint.h"
#include "toolkit/training/checkpoint_manager.h"
#include "toolkit/training/distributed_setup.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/recipe_compat.h"
#include "toolkit/training/stop_signal.h"
#include "toolkit/training/train_log.h"
#include "toolkit/training/trainer.h"
#include "toolkit/training/validation_hooks.h"

namespace fs = std::filesystem;

namespace csan::training {

namespace {

constexpr int64_t kMaxNonFiniteInARow = 10;

// Source and target suffixes from the recipe, or from the one SUBSET.X-Y.X.idx file pair
// in the data directory.
std::pair<std::string, std::string> languages(const core::Config& cfg, const std::string& data_dir) {
  std::string src = cfg.get<std::string>("task.source_lang"), tgt = cfg.get<std::string>("task.target_lang");
  if (!src.empty() && !tgt.empty()) return {src, tgt};
  if (!fs::is_directory(data_dir)) throw Error(data_dir + ": no such data directory");
  const std::string subset = cfg.get<std::string>("task.train_subset");
  const std::regex pattern(subset + R"(\.([^.\-]+)-([^.\-]+)\.([^.]+)\.idx)");
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& entry : fs::directory_iterator(data_dir)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, pattern) && m[1] == m[3]) found.emplace_back(m[1], m[2]);
  }
  if (found.size() != 1)
    throw Error(data_dir + ": cannot infer the language pair (" + std::to_string(found.size()) + " candidates for " +
                subset + ".SRC-TGT.SRC.idx); set task.source_lang and task.target_lang");
  return found[0];
}

std::string read_if_exists(const std::string& path) { return fs::exists(path) ? read_file(path) : std::string(); }

struct ValidationResult {
  StepStats stats;
  std::optional<double> bleu;  // with task.eval_bleu
  double metric = 0;
};

}  // namespace

int run_training(const core::Config& recipe) {
  core::Config cfg = recipe;
  models::apply_arch_preset(cfg);

  // ---- data
  const std::string data_dir = cfg.get<std::string>("task.data");
  const auto [src_lang, tgt_lang] = languages(cfg, data_dir);
  CheckpointMeta meta;
  meta.src_lang = src_lang;
  meta.tgt_lang = tgt_lang;
  const std::string src_dict_path = data_dir + "/dict." + src_lang + ".txt";
  const std::string tgt_dict_path = data_dir + "/dict." + tgt_lang + ".txt";
  meta.src_dict = read_file(src_dict_path);
  meta.tgt_dict = read_file(tgt_dict_path);
  meta.spm_model = read_if_exists(data_dir + "/spm.model");
  const auto src_dict = text::Dictionary::parse(meta.src_dict, src_dict_path);
  const auto tgt_dict = text::Dictionary::parse(meta.tgt_dict, tgt_dict_path);
  if (src_dict.pad() != tgt_dict.pad() || src_dict.eos() != tgt_dict.eos())
    throw Error("source and target dictionaries disagree on <pad>/</s>");
  const int64_t pad = tgt_dict.pad(), eos = tgt_dict.eos();

  data::LanguagePairDataset train_data(data_dir, cfg.get<std::string>("task.train_subset"), src_lang, tgt_lang, pad,
                                       eos);
  const std::string valid_subset = cfg.get<std::string>("task.valid_subset");
  std::unique_ptr<data::LanguagePairDataset> valid_data;
  const bool validation_wanted = !cfg.get<bool>("dataset.disable_validation");
  if (validation_wanted &&
      fs::exists(data_dir + "/" + valid_subset + "." + src_lang + "-" + tgt_lang + "." + src_lang + ".idx"))
    valid_data = std::make_unique<data::LanguagePairDataset>(data_dir, valid_subset, src_lang, tgt_lang, pad, eos);

  const bool eval_bleu = cfg.get<bool>("task.eval_bleu");
  const std::string best_metric_name = cfg.get<std::string>("checkpoint.best_checkpoint_metric");
  if (eval_bleu && !bleu_evaluator_factory())
    throw Error::for_key("task.eval_bleu",
                         "BLEU validation needs the sequence generator, which this program does not register");
  if (best_metric_name == "bleu" && !eval_bleu)
    throw Error::for_key("checkpoint.best_checkpoint_metric", "'bleu' needs task.eval_bleu: true");
  const bool maximize = best_metric_name == "bleu" || cfg.get<bool>("checkpoint.maximize_best_checkpoint_metric");

  // ---- save dir and log
  CheckpointPolicy policy;
  policy.save_dir = cfg.get<std::string>("checkpoint.save_dir");
  policy.save_interval = cfg.get<int64_t>("checkpoint.save_interval");
  policy.save_interval_updates = cfg.get<int64_t>("checkpoint.save_interval_updates");
  policy.keep_interval_updates = cfg.get<int64_t>("checkpoint.keep_interval_updates");
  policy.keep_last_epochs = cfg.get<int64_t>("checkpoint.keep_last_epochs");
  policy.no_epoch_checkpoints = cfg.get<bool>("checkpoint.no_epoch_checkpoints");
  const bool no_save = cfg.get<bool>("checkpoint.no_save");
  fs::create_directories(policy.save_dir);
  meta.recipe_yaml = cfg.to_yaml();

  // Opened (and verified) before anything is logged, so a bad checkpoint is the only
  // line a failing start prints.
  std::unique_ptr<CheckpointReader> resume;
  std::string restore = cfg.get<std::string>("checkpoint.restore_file");
  if (fs::path(restore).is_relative() && !fs::exists(restore)) restore = policy.save_dir + "/" + restore;
  if (fs::exists(restore)) {
    resume = std::make_unique<CheckpointReader>(restore);
  } else if (cfg.is_set("checkpoint.restore_file")) {
    throw Error::for_key("checkpoint.restore_file", restore + ": no such checkpoint");
  }
  // A model or data change is refused here, before anything is logged.
  const std::string recipe_changes_since_checkpoint =
      resume ? check_resume_compatible(cfg, meta, resume->meta(), resume->path(), data_dir) : std::string();

  const int64_t max_update = cfg.get<int64_t>("optimization.max_update");
  const int64_t max_epoch = cfg.get<int64_t>("optimization.max_epoch");
  // Data-parallel workers meet before any output; rank 0 alone logs and writes files.
  const DistributedSetup distributed = resolve_distributed_setup(cfg);
  TrainLog log(distributed.rank == 0 ? policy.save_dir + "/metrics.jsonl" : std::string(),
               cfg.get<int64_t>("common.log_interval"), max_update);
  log.set_quiet(distributed.rank != 0);

  // ---- model and trainer (the seed fixes initial weights and then dropout)
  const int64_t seed = cfg.get<int64_t>("common.seed");
  torch::manual_seed(static_cast<uint64_t>(seed));
  models::ModelContext context;
  context.src_vocab_size = src_dict.size();
  context.tgt_vocab_size = tgt_dict.size();
  context.pad_index = pad;
  context.joined_dictionary = src_dict == tgt_dict;
  TrainerParts parts;
  parts.model = models::build_model(cfg, context);
  parts.precision = make_precision_policy(cfg, distributed.world_size);  // scale window per world size
  parts.precision->prepare_model(*parts.model);
  parts.optimizer = build_optimizer(parts.precision->optimizer_params(unique_parameters(*parts.model)), cfg);
  parts.lr_scheduler = build_lr_scheduler(cfg);
  parts.criterion = build_criterion(cfg, pad);
  if (distributed.distributed())
    parts.sync = std::make_unique<C10dGradientSync>(distributed, parts.model->parameters().front().device());
  else
    parts.sync = std::make_unique<LocalGradientSync>();
  parts.clip_norm = cfg.get<double>("optimization.clip_norm");
  Trainer trainer(std::move(parts));
  const bool master = trainer.sync().is_master();
  std::unique_ptr<BleuEvaluator> bleu;
  if (eval_bleu && valid_data)
    bleu = bleu_evaluator_factory()(BleuContext{cfg, *valid_data, src_dict, tgt_dict, meta.spm_model,
                                                [&log, master](const std::string& line) {
                                                  if (master) log.info(line);
                                                }});

  log.info("data " + data_dir + " (" + src_lang + " -> " + tgt_lang + "): " + std::to_string(train_data.size()) +
           " training pairs, " + (valid_data ? std::to_string(valid_data->size()) : std::string("no")) +
           " validation pairs; dictionaries " + std::to_string(src_dict.size()) + " / " +
           std::to_string(tgt_dict.size()) + (context.joined_dictionary ? " (joined)" : ""));
  log.info("model " + cfg.get<std::string>("model.arch") + ": " +
           std::to_string(nn::count_parameters(trainer.model())) + " parameters");
  const std::string slow_precision = precision_speed_warning(cfg.get<std::string>("common.precision"),
                                                             trainer.model().parameters().front().device());
  if (!slow_precision.empty() && master) log.info(slow_precision);
  if (distributed.distributed())
    log.info("distributed: " + std::to_string(distributed.world_size) + " workers (" + distributed.source +
             "), rendezvous " + distributed.master_addr + ":" + std::to_string(distributed.master_port) + ", " +
             std::to_string(torch::get_num_threads()) + " threads per worker");

  // ---- resume
  TrainingProgress progress;
  if (resume) {
    trainer.load_state(*resume);
    progress = resume->progress();
    log.info("resumed from " + resume->path() + " at epoch " + std::to_string(progress.epoch) + ", update " +
             std::to_string(progress.num_updates));
    if (!recipe_changes_since_checkpoint.empty())
      log.info("recipe changes since " + resume->path() + ": " + recipe_changes_since_checkpoint);
    resume.reset();  // frees the checkpoint bytes
  }

  data::BatchingOptions batching{cfg.get<int64_t>("dataset.max_tokens"), cfg.get<int64_t>("dataset.max_sentences"),
                                 cfg.get<int64_t>("dataset.required_batch_size_multiple")};
  const int rank = trainer.sync().rank(), world = trainer.sync().world_size();
  data::EpochIterator epochs(train_data.src_sizes(), train_data.tgt_sizes(), batching, static_cast<uint64_t>(seed),
                             /*shuffle=*/true, rank, world, {progress.epoch, progress.next_batch});
  log.info("batching: max_tokens " + std::to_string(batching.max_tokens) + ", " +
           std::to_string(epochs.batches_in_epoch()) + " batches per epoch, update_freq " +
           std::to_string(cfg.get<int64_t>("optimization.update_freq")));

  std::vector<data::Batch> valid_batches;
  if (valid_data) {
    data::BatchingOptions vb = batching;
    if (cfg.get<int64_t>("dataset.max_tokens_valid") > 0) vb.max_tokens = cfg.get<int64_t>("dataset.max_tokens_valid");
    valid_batches = data::shard_batches(
        data::batch_by_size(data::ordered_indices(valid_data->src_sizes(), valid_data->tgt_sizes(), 0),
                            valid_data->src_sizes(), valid_data->tgt_sizes(), vb),
        rank, world);
  }

  auto validate = [&]() {
    ValidationResult v;
    for (const auto& batch : valid_batches) v.stats.add(trainer.valid_step(to_tensors(valid_data->collate(batch))));
    std::vector<double> sums{v.stats.loss_sum, v.stats.nll_sum, static_cast<double>(v.stats.ntokens),
                             static_cast<double>(v.stats.nsentences), static_cast<double>(v.stats.sample_size)};
    trainer.sync().all_reduce_sums(sums);
    v.stats.loss_sum = sums[0];
    v.stats.nll_sum = sums[1];
    v.stats.ntokens = static_cast<int64_t>(sums[2]);
    v.stats.nsentences = static_cast<int64_t>(sums[3]);
    v.stats.sample_size = static_cast<int64_t>(sums[4]);
    if (bleu) {
      // Each rank translated its shard; the corpus statistics are the sums.
      std::vector<double> statistics = bleu->statistics(trainer.model(), valid_batches);
      trainer.sync().all_reduce_sums(statistics);
      v.bleu = bleu->score(statistics);
    }
    if (best_metric_name == "bleu") {
      v.metric = *v.bleu;
    } else {
      v.metric = best_metric_name == "nll_loss" ? v.stats.nll_bits() : v.stats.loss_bits();
    }
    return v;
  };

  const int64_t patience = cfg.get<int64_t>("optimization.patience");
  // Validates; updates best/patience; returns whether the metric improved.
  auto validate_and_track = [&]() {
    if (!valid_data) return false;
    auto v = validate();
    const bool improved =
        !progress.has_best || (maximize ? v.metric > progress.best_metric : v.metric < progress.best_metric);
    if (improved) {
      progress.best_metric = v.metric;
      progress.has_best = true;
      progress.bad_validations = 0;
    } else {
      ++progress.bad_validations;
    }
    if (master)
      log.validation(epochs.epoch(), trainer.num_updates(), valid_subset, v.stats, progress.best_metric,
                     best_metric_name, v.metric, v.bleu);
    return improved;
  };

  auto save = [&](bool end_of_epoch, bool improved) {
    if (no_save || !master) return;
    TrainingProgress snapshot = progress;
    snapshot.num_updates = trainer.num_updates();
    snapshot.epoch = end_of_epoch ? epochs.epoch() + 1 : epochs.epoch();
    snapshot.next_batch = end_of_epoch ? 0 : epochs.position().next_batch;
    const auto names = checkpoint_names(policy, epochs.epoch(), trainer.num_updates(), end_of_epoch, improved);
    CheckpointWriter writer;
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
      log.end_epoch(epochs.epoch());
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
      group.push_back(to_tensors(train_data.collate(epochs.next())));
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
  log.end_epoch(epochs.epoch());
  log.info("done: " + stop_reason + "; " + std::to_string(trainer.num_updates()) + " updates" +
           (progress.has_best ? ", best valid " + best_metric_name + " " + std::to_string(progress.best_metric)
                              : std::string()));
  return 0;
}

}  // namespace csan::training
