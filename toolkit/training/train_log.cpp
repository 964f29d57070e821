#include "toolkit/training/train_log.h"

#include <cmath>
#include <cstdio>
#include <map>

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

TrainLog::TrainLog(const std::string& metrics_path, int64_t log_interval, int64_t max_update)
    : log_interval_(log_interval),
      max_update_(max_update),
      tty_(stderr_is_tty()),
      progress_("train", max_update),
      interval_start_(std::chrono::steady_clock::now()),
      run_start_(interval_start_) {
  if (!metrics_path.empty()) json_ = std::make_unique<JsonLinesWriter>(metrics_path, /*append=*/true);
}

void TrainLog::info(const std::string& line) {
  if (quiet_) return;
  progress_.finish();
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void TrainLog::update(int64_t epoch, int64_t num_updates, const UpdateResult& r) {
  if (start_update_ < 0) start_update_ = num_updates - (r.skipped ? 0 : 1);
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
    progress_.update(num_updates, tail);
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
  if (max_update_ > 0 && num_updates > start_update_) {
    const double per_update = seconds_since(run_start_) / static_cast<double>(num_updates - start_update_);
    eta = " | eta " + format_duration(per_update * static_cast<double>(max_update_ - num_updates));
  }
  if (!tty_)
    info("epoch " + std::to_string(epoch) + " | update " + std::to_string(num_updates) + " | loss " +
         fmt("%.3f", interval_.loss_bits()) + " | nll " + fmt("%.3f", interval_.nll_bits()) + " | ppl " +
         fmt("%.2f", interval_.ppl()) + " | lr " + fmt("%.4g", lr_) + " | gnorm " + fmt("%.3f", gnorm) + " | wps " +
         fmt("%.0f", wps) + " | ups " + fmt("%.2f", ups) +
         (loss_scale_ > 0 ? " | loss_scale " + fmt("%.4g", loss_scale_) : std::string()) + eta);
  if (json_) {
    std::map<std::string, JsonLinesWriter::Value> record{{"kind", std::string("train")},
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
                                                         {"wall", seconds_since(run_start_)}};
    if (loss_scale_ > 0) record["loss_scale"] = loss_scale_;
    json_->write(record);
  }
  interval_ = StepStats{};
  gnorm_sum_ = 0;
  interval_updates_ = interval_skipped_ = 0;
  interval_start_ = std::chrono::steady_clock::now();
}

void TrainLog::validation(int64_t epoch, int64_t num_updates, const std::string& subset, const StepStats& s,
                          double best_metric, const std::string& metric_name, double metric,
                          const std::vector<std::pair<std::string, double>>& metrics) {
  std::string reported;
  for (const auto& [name, value] : metrics) reported += " | " + name + " " + fmt("%.2f", value);
  info("epoch " + std::to_string(epoch) + " | valid on '" + subset + "' | update " + std::to_string(num_updates) +
       " | loss " + fmt("%.3f", s.loss_bits()) + " | nll " + fmt("%.3f", s.nll_bits()) + " | ppl " +
       fmt("%.2f", s.ppl()) + reported + " | best_" + metric_name + " " + fmt("%.3f", best_metric));
  if (json_) {
    std::map<std::string, JsonLinesWriter::Value> record{{"kind", std::string("valid")},
                                                         {"epoch", static_cast<long long>(epoch)},
                                                         {"update", static_cast<long long>(num_updates)},
                                                         {"loss", s.loss_bits()},
                                                         {"nll_loss", s.nll_bits()},
                                                         {"ppl", s.ppl()},
                                                         {metric_name, metric},
                                                         {"best_" + metric_name, best_metric},
                                                         {"wall", seconds_since(run_start_)}};
    for (const auto& [name, value] : metrics) record[name] = value;
    json_->write(record);
  }
}

void TrainLog::end_epoch(int64_t epoch) {
  (void)epoch;
  progress_.finish();
}

}  // namespace csan::training
