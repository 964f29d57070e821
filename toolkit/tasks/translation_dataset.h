// The data of one language pair as the translation tasks train on it: the binarized
// pairs of one split, checked against the dictionaries and the model's positions
// (shared by the translation and multilingual_translation tasks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/tasks/translation_task.h"
#include "toolkit/text/dictionary.h"
#include "toolkit/training/task.h"

namespace csan::tasks {

// DIR/FILE's bytes, or "" when there is no such file (an optional spm.model).
std::string read_if_exists(const std::string& path);

// Positions a model has for each side (0: no limit, for archs without these keys).
struct PositionLimits {
  int64_t source = 0, target = 0;
  static PositionLimits of(const core::Config& cfg) {
    auto limit = [&](const char* key) { return cfg.has(key) ? cfg.get<int64_t>(key) : int64_t{0}; };
    return {limit("model.max_source_positions"), limit("model.max_target_positions")};
  }
  bool fits(int32_t src, int32_t tgt) const { return (source == 0 || src <= source) && (target == 0 || tgt <= target); }
};

class TranslationDataset : public training::TaskDataset {
 public:
  // Checks every token id against the dictionaries: an id past the end would index past an
  // embedding table in the middle of training. Pairs longer than the model's positions
  // are left out of a training split (counted, as fairseq filters by size) and are an
  // error naming the record in any other split. `source_prefix` >= 0 is put before every
  // source sentence (LanguagePairDataset::set_source_prefix) and counts in its length.
  TranslationDataset(const std::string& dir, const std::string& split, const std::string& src, const std::string& tgt,
                     int64_t pad, int64_t decoder_start, const text::Dictionary& src_dict,
                     const text::Dictionary& tgt_dict, const PositionLimits& limits, bool skip_too_long,
                     int64_t source_prefix = -1);
  size_t size() const override { return skipped_ ? kept_.size() : pairs_.size(); }
  const std::vector<int32_t>& source_sizes() const override { return skipped_ ? src_sizes_ : pairs_.src_sizes(); }
  const std::vector<int32_t>& target_sizes() const override { return skipped_ ? tgt_sizes_ : pairs_.tgt_sizes(); }
  training::TensorBatch collate(const data::Batch& batch) const override {
    if (!skipped_) return translation_batch(pairs_.collate(batch));
    data::Batch stored;
    for (int64_t i : batch) stored.push_back(kept_[static_cast<size_t>(i)]);
    return translation_batch(pairs_.collate(stored));
  }
  const data::LanguagePairDataset& pairs() const { return pairs_; }
  size_t skipped() const { return skipped_; }
  // The stored record of example i (examples skip the pairs left out).
  int64_t stored_index(size_t i) const { return skipped_ ? kept_[i] : static_cast<int64_t>(i); }

 private:
  data::LanguagePairDataset pairs_;
  size_t skipped_ = 0;
  std::vector<int64_t> kept_;  // stored index of each kept pair (when some were skipped)
  std::vector<int32_t> src_sizes_, tgt_sizes_;
};

}  // namespace csan::tasks
