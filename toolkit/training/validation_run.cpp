#include "toolkit/training/validation_run.h"

#include "toolkit/core/error.h"

namespace csan::training {

namespace {

MetricSpec best_metric_spec(const core::Config& cfg, const Task& task) {
  const std::string name = cfg.get<std::string>("checkpoint.best_checkpoint_metric");
  std::vector<MetricSpec> known = {{"loss", false}, {"nll_loss", false}};
  for (const auto& m : task.metrics()) known.push_back(m);
  for (const auto& m : known)
    if (m.name == name)
      return {name, m.higher_is_better || cfg.get<bool>("checkpoint.maximize_best_checkpoint_metric")};
  std::string names;
  for (const auto& m : known) names += (names.empty() ? "" : ", ") + m.name;
  throw Error::for_key("checkpoint.best_checkpoint_metric",
                       "'" + name + "' is not a metric this run validates with (task " + task.name() + ": " + names +
                           (name == "bleu" ? "; 'bleu' needs task.eval_bleu: true" : "") + ")");
}

}  // namespace

ValidationRun::ValidationRun(const core::Config& cfg, const Task& task, const TaskDataset* valid, int rank,
                             int world_size, std::function<void(const std::string&)> log)
    : task_(task), valid_(valid), best_(best_metric_spec(cfg, task)), log_(std::move(log)) {
  if (!valid_) return;
  data::BatchingOptions options{cfg.get<int64_t>("dataset.max_tokens"), cfg.get<int64_t>("dataset.max_sentences"),
                                cfg.get<int64_t>("dataset.required_batch_size_multiple")};
  if (cfg.get<int64_t>("dataset.max_tokens_valid") > 0)
    options.max_tokens = cfg.get<int64_t>("dataset.max_tokens_valid");
  batches_ =
      data::shard_batches(data::batch_by_size(data::ordered_indices(valid_->source_sizes(), valid_->target_sizes(), 0),
                                              valid_->source_sizes(), valid_->target_sizes(), options),
                          rank, world_size);
}

void ValidationRun::start() {
  if (valid_ && !task_.metrics().empty()) validator_ = task_.validator(log_);
}

ValidationResult ValidationRun::run(Trainer& trainer) const {
  ValidationResult v;
  for (const auto& batch : batches_) v.stats.add(trainer.valid_step(valid_->collate(batch)));
  std::vector<double> sums{v.stats.loss_sum, v.stats.nll_sum, static_cast<double>(v.stats.ntokens),
                           static_cast<double>(v.stats.nsentences), static_cast<double>(v.stats.sample_size)};
  trainer.sync().all_reduce_sums(sums);
  v.stats.loss_sum = sums[0];
  v.stats.nll_sum = sums[1];
  v.stats.ntokens = static_cast<int64_t>(sums[2]);
  v.stats.nsentences = static_cast<int64_t>(sums[3]);
  v.stats.sample_size = static_cast<int64_t>(sums[4]);
  if (validator_) {
    // Each rank scored its shard; the corpus statistics are the sums.
    std::vector<double> statistics = validator_->statistics(trainer.model(), batches_);
    trainer.sync().all_reduce_sums(statistics);
    v.metrics = validator_->values(statistics);
  }
  v.metric = best_.name == "nll_loss" ? v.stats.nll_bits() : v.stats.loss_bits();
  for (const auto& [name, value] : v.metrics)
    if (name == best_.name) v.metric = value;
  return v;
}

bool ValidationRun::record(double metric, checkpoint::TrainingProgress& progress) const {
  const bool improved =
      !progress.has_best || (best_.higher_is_better ? metric > progress.best_metric : metric < progress.best_metric);
  if (improved) {
    progress.best_metric = metric;
    progress.has_best = true;
    progress.bad_validations = 0;
  } else {
    ++progress.bad_validations;
  }
  return improved;
}

}  // namespace csan::training
