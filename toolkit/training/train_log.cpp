#include "toolkit/training/train_log.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/json_text.h"
#include "toolkit/core/process_memory.h"

namespace csan::training {

namespace {
std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

TrainLog::TrainLog(int64_t log_interval, int64_t max_update)
    : log_interval_(log_interval),
      max_update_(max_update),
      tty_(stderr_is_tty()),
      progress_("train", max_update),
      interval_start_(std::chrono::steady_clock::now()),
      run_start_(interval_start_),
      epoch_start_(interval_start_) {}

void TrainLog::open_outputs(const TrainLogOutputs& outputs) {
  task_ = outputs.task;
  on_record_ = outputs.on_record;
  if (!outputs.metrics_path.empty()) {
    if (outputs.resumed_at) truncate_metrics(outputs.metrics_path, *outputs.resumed_at);
    json_ = std::make_unique<JsonLinesWriter>(outputs.metrics_path, /*append=*/true);
  }
  if (!outputs.tensorboard_dir.empty())
    tensorboard_ = std::make_unique<TensorboardWriter>(outputs.tensorboard_dir, outputs.resumed_at);
}

size_t truncate_metrics(const std::string& path, int64_t last_kept_update) {
  if (!std::filesystem::exists(path)) return 0;
  const std::string text = read_file(path);
  std::string kept;
  size_t dropped = 0;
  for (size_t start = 0, number = 1; start < text.size(); ++number) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {  // a line cut short by a crash goes
      ++dropped;
      break;
    }
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const auto record = core::parse_json_line(line, path, number);
    const auto update = record.find("update");  // end() for anything but an object
    if (update != record.end() && update->is_number_integer() && update->get<int64_t>() > last_kept_update)
      ++dropped;
    else
      kept += line + "\n";
  }
  if (dropped > 0) write_file_atomically(path, kept);
  return dropped;
}

void TrainLog::info(const std::string& line) {
  if (quiet_) return;
  progress_.finish();
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void TrainLog::update(int64_t epoch, int64_t num_updates, const UpdateResult& r) {
  if (start_update_ < 0) {
    start_update_ = num_updates - (r.skipped ? 0 : 1);
    remaining_.observe(0.0, start_update_);
  }
  interval_.loss_sum += r.stats.loss_sum;
  interval_.nll_sum += r.stats.nll_sum;
  interval_.ntokens += r.stats.ntokens;
  interval_.nsentences += r.stats.nsentences;
  interval_.sample_size += r.stats.sample_size;
  ++interval_updates_;
  if (r.skipped)
    ++interval_skipped_;
  else
    gnorm_sum_ += r.gnorm;
  lr_ = r.lr;
  loss_scale_ = r.loss_scale;
  if (tty_) {
    const double elapsed = seconds_since(interval_start_);
    std::string tail = "epoch " + std::to_string(epoch) + " | loss " + fmt("%.3f", interval_.loss_bits()) + " | nll " +
                       fmt("%.3f", interval_.nll_bits()) + " | ppl " + fmt("%.2f", interval_.ppl()) + " | lr " +
                       fmt("%.3g", lr_) + " | gnorm " +
                       fmt("%.3f", gnorm_sum_ / std::max<int64_t>(1, interval_updates_ - interval_skipped_)) +
                       " | wps " + fmt("%.0f", interval_.ntokens / std::max(elapsed, 1e-9)) + " | ups " +
                       fmt("%.2f", interval_updates_ / std::max(elapsed, 1e-9));
    if (loss_scale_ > 0) tail += " | loss_scale " + fmt("%.4g", loss_scale_);
    progress_.update(num_updates, tail,
                     max_update_ > 0 ? remaining_.seconds_left(max_update_, num_updates) : std::nullopt);
  }
  if (num_updates % log_interval_ == 0 && !r.skipped) flush_interval(epoch, num_updates);
}

void TrainLog::flush_interval(int64_t epoch, int64_t num_updates) {
  if (interval_updates_ == 0) return;
  const double elapsed = std::max(seconds_since(interval_start_), 1e-9);
  const double wps = interval_.ntokens / elapsed, ups = interval_updates_ / elapsed;
  const int64_t applied = std::max<int64_t>(1, interval_updates_ - interval_skipped_);
  const double gnorm = gnorm_sum_ / applied;
  std::string eta;
  remaining_.observe(seconds_since(run_start_), num_updates);
  if (max_update_ > 0)
    if (const auto left = remaining_.seconds_left(max_update_)) eta = " | eta " + format_duration(*left);
  if (!tty_)
    info("epoch " + std::to_string(epoch) + " | update " + std::to_string(num_updates) + " | loss " +
         fmt("%.3f", interval_.loss_bits()) + " | nll " + fmt("%.3f", interval_.nll_bits()) + " | ppl " +
         fmt("%.2f", interval_.ppl()) + " | lr " + fmt("%.4g", lr_) + " | gnorm " + fmt("%.3f", gnorm) + " | wps " +
         fmt("%.0f", wps) + " | ups " + fmt("%.2f", ups) +
         (loss_scale_ > 0 ? " | loss_scale " + fmt("%.4g", loss_scale_) : std::string()) + eta);
  if (json_ || on_record_) {
    TrainLogRecord record{{"kind", std::string("train")},
                          {"epoch", static_cast<long long>(epoch)},
                          {"update", static_cast<long long>(num_updates)},
                          {"loss", interval_.loss_bits()},
                          {"nll_loss", interval_.nll_bits()},
                          {"ppl", interval_.ppl()},
                          {"lr", lr_},
                          {"gnorm", gnorm},
                          {"wps", wps},
                          {"ups", ups},
                          {"skipped", static_cast<long long>(interval_skipped_)},
                          {"wall", seconds_since(run_start_)},
                          {"rss_mib", core::resident_mib()},
                          {"peak_rss_mib", core::peak_resident_mib()}};
    if (loss_scale_ > 0) record["loss_scale"] = loss_scale_;
    emit(std::move(record));
  }
  if (tensorboard_) {
    std::vector<TensorboardScalar> scalars{{"loss", interval_.loss_bits()},
                                           {"nll_loss", interval_.nll_bits()},
                                           {"ppl", interval_.ppl()},
                                           {"lr", lr_},
                                           {"gnorm", gnorm},
                                           {"wps", wps},
                                           {"ups", ups},
                                           {"wall", seconds_since(run_start_)}};
    if (loss_scale_ > 0) scalars.push_back({"loss_scale", loss_scale_});
    tensorboard_->add_scalars("train_inner", num_updates, scalars);
  }
  interval_ = StepStats{};
  gnorm_sum_ = 0;
  interval_updates_ = interval_skipped_ = 0;
  interval_start_ = std::chrono::steady_clock::now();
}

void TrainLog::emit(TrainLogRecord record) {
  if (!task_.empty()) record["task"] = task_;
  if (json_) json_->write(record);
  if (on_record_) on_record_(record);
}

void TrainLog::validation(int64_t epoch, int64_t num_updates, const std::string& subset, const StepStats& s,
                          double best_metric, const std::string& metric_name, double metric,
                          const std::vector<std::pair<std::string, double>>& metrics) {
  std::string reported;
  for (const auto& [name, value] : metrics) reported += " | " + name + " " + fmt("%.2f", value);
  info("epoch " + std::to_string(epoch) + " | valid on '" + subset + "' | update " + std::to_string(num_updates) +
       " | loss " + fmt("%.3f", s.loss_bits()) + " | nll " + fmt("%.3f", s.nll_bits()) + " | ppl " +
       fmt("%.2f", s.ppl()) + reported + " | best_" + metric_name + " " + fmt("%.3f", best_metric));
  if (json_ || on_record_) {
    TrainLogRecord record{{"kind", std::string("valid")},
                          {"epoch", static_cast<long long>(epoch)},
                          {"update", static_cast<long long>(num_updates)},
                          {"loss", s.loss_bits()},
                          {"nll_loss", s.nll_bits()},
                          {"ppl", s.ppl()},
                          {metric_name, metric},
                          {"best_" + metric_name, best_metric},
                          {"wall", seconds_since(run_start_)}};
    for (const auto& [name, value] : metrics) record[name] = value;
    emit(std::move(record));
  }
  if (tensorboard_) {
    std::vector<TensorboardScalar> scalars{
        {"loss", s.loss_bits()}, {"nll_loss", s.nll_bits()}, {"ppl", s.ppl()}, {"best_" + metric_name, best_metric}};
    for (const auto& [name, value] : metrics) scalars.push_back({name, value});
    tensorboard_->add_scalars(subset, num_updates, scalars);
  }
}

void TrainLog::end_epoch(int64_t epoch, int64_t num_updates, bool complete) {
  (void)epoch;
  progress_.finish();
  // fairseq's "train" run: the epoch's averages, once per completed epoch.
  if (tensorboard_ && complete && epoch_updates_ > 0) {
    const double elapsed = std::max(seconds_since(epoch_start_), 1e-9);
    const int64_t applied = std::max<int64_t>(1, epoch_updates_ - epoch_skipped_);
    tensorboard_->add_scalars("train", num_updates,
                              {{"loss", epoch_.loss_bits()},
                               {"nll_loss", epoch_.nll_bits()},
                               {"ppl", epoch_.ppl()},
                               {"lr", lr_},
                               {"gnorm", epoch_gnorm_sum_ / applied},
                               {"wps", epoch_.ntokens / elapsed},
                               {"ups", epoch_updates_ / elapsed},
                               {"wall", seconds_since(run_start_)}});
  }
  epoch_ = StepStats{};
  epoch_gnorm_sum_ = 0;
  epoch_updates_ = epoch_skipped_ = 0;
  epoch_start_ = std::chrono::steady_clock::now();
}

}  // namespace csan::training
