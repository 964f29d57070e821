#include "toolkit/training/trainer.h"

#include <cmath>
#include <csignal>

#include "toolkit/checkpoint/optimizer_state.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/stop_signal.h"

namespace csan::training {

void StepStats::add(const CriterionOutput& out) {
  loss_sum += out.loss_sum;
  nll_sum += out.nll_sum;
  ntokens += out.ntokens;
  nsentences += out.nsentences;
  sample_size += out.sample_size;
}

void StepStats::add(const StepStats& o) {
  loss_sum += o.loss_sum;
  nll_sum += o.nll_sum;
  ntokens += o.ntokens;
  nsentences += o.nsentences;
  sample_size += o.sample_size;
}

double StepStats::loss_bits() const { return base2(loss_sum, static_cast<double>(sample_size)); }
double StepStats::nll_bits() const { return base2(nll_sum, static_cast<double>(ntokens)); }
double StepStats::ppl() const { return std::pow(2.0, nll_bits()); }

namespace {
// Stats travel through all_reduce_sums as doubles (token counts stay exact below 2^53).
std::vector<double> pack(const StepStats& s) {
  return {s.loss_sum, s.nll_sum, static_cast<double>(s.ntokens), static_cast<double>(s.nsentences),
          static_cast<double>(s.sample_size)};
}
StepStats unpack(const std::vector<double>& v) {
  StepStats s;
  s.loss_sum = v[0];
  s.nll_sum = v[1];
  s.ntokens = static_cast<int64_t>(v[2]);
  s.nsentences = static_cast<int64_t>(v[3]);
  s.sample_size = static_cast<int64_t>(v[4]);
  return s;
}
}  // namespace

Trainer::Trainer(TrainerParts parts) : parts_(std::move(parts)) {
  params_ = unique_parameters(*parts_.model);
  device_ = nn::device_of(*parts_.model);
  optimizer_params_ = parts_.precision->optimizer_params(params_);
}

TensorBatch Trainer::on_device(const TensorBatch& batch) const { return device_.is_cpu() ? batch : batch.to(device_); }

UpdateResult Trainer::train_step(const std::vector<TensorBatch>& micro_batches) {
  auto& model = *parts_.model;
  model.train();
  clear_grads(*parts_.optimizer);
  UpdateResult result;
  result.lr = current_lr();
  set_learning_rate(*parts_.optimizer, result.lr);

  StepStats local;
  for (const auto& batch : micro_batches) {
    if (batch.empty()) continue;  // padding batch of a short shard: contributes nothing
    CriterionOutput out;
    {
      AutocastGuard forward_precision(parts_.precision->autocast());
      out = parts_.criterion->compute(model, on_device(batch));
    }
    parts_.precision->scale_loss(out.loss).backward();
    local.add(out);
  }

  auto sums = pack(local);
  // A stop signal seen by any rank rides on the statistics, so every rank stops after the
  // same update instead of leaving the others waiting in the next all-reduce.
  const int signal = StopSignalGuard::pending();
  sums.push_back(signal == SIGINT ? 1 : 0);
  sums.push_back(signal == SIGTERM ? 1 : 0);
  parts_.sync->all_reduce_grads(params_);
  parts_.sync->all_reduce_sums(sums);
  result.stop_signal = sums[sums.size() - 1] > 0 ? SIGTERM : sums[sums.size() - 2] > 0 ? SIGINT : 0;
  result.stats = unpack(sums);

  if (result.stats.sample_size == 0) {  // nothing to learn from on any rank
    result.skipped = true;
    return result;
  }
  parts_.precision->unscale_grads(params_, 1.0 / static_cast<double>(result.stats.sample_size));
  result.gnorm = clip_grad_norm(optimizer_params_, parts_.clip_norm);
  const bool overflow = !std::isfinite(result.gnorm) || !std::isfinite(result.stats.loss_sum);
  parts_.precision->after_update(overflow);
  if (parts_.precision->scales_loss()) result.loss_scale = parts_.precision->loss_scale();
  if (overflow) {
    clear_grads(*parts_.optimizer);
    result.skipped = true;
    return result;
  }
  parts_.optimizer->step();
  parts_.precision->after_step();
  ++num_updates_;
  if (ema_) ema_->step(optimizer_params_, num_updates_);
  return result;
}

StepStats Trainer::valid_step(const TensorBatch& batch) {
  StepStats stats;
  if (!batch.empty()) {
    torch::NoGradGuard no_grad;
    auto& model = *parts_.model;
    model.eval();
    AutocastGuard forward_precision(parts_.precision->autocast());
    stats.add(parts_.criterion->compute(model, on_device(batch)));
  }
  return stats;
}

void Trainer::enable_ema(const EmaOptions& options) {
  ema_ = std::make_unique<WeightsEma>(options, checkpoint::unique_parameter_names(*parts_.model), optimizer_params_);
}

void Trainer::save_state(checkpoint::CheckpointWriter& writer) const {
  writer.set_model(*parts_.model);
  writer.set_optimizer(*parts_.optimizer, *parts_.model);
  parts_.precision->save(writer.section("precision"));
  if (ema_) ema_->save(writer.section("ema"));
  writer.capture_rng_state(device_);
}

void Trainer::load_state(checkpoint::CheckpointReader& reader, const checkpoint::TrainingProgress& progress,
                         const Restore& what) {
  reader.load_model(*parts_.model);
  // A model imported from another toolkit (csan-import) has none: fine-tuning it starts
  // with a fresh optimizer, as fairseq's --reset-optimizer.
  if (what.optimizer && reader.has_optimizer_state()) reader.load_optimizer(*parts_.optimizer, *parts_.model);
  // Checkpoints load onto the CPU (one written on a GPU resumes anywhere).
  move_optimizer_state(*parts_.optimizer, device_);
  if (reader.has_section("precision")) parts_.precision->load(reader.section("precision"));
  // As fairseq: a checkpoint without EMA (or a fine-tuning start) seeds it with its weights
  // (or with ema.ema_seed_model's EMA).
  if (ema_ && what.ema && reader.has_section("ema"))
    ema_->load(reader.section("ema"));
  else if (ema_)
    ema_->restart(optimizer_params_);
  if (what.rng) reader.restore_rng_state(device_);
  num_updates_ = progress.num_updates;
  lr_schedule_start_ = progress.lr_schedule_start;
}

}  // namespace csan::training
