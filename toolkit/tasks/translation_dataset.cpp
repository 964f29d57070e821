#include "toolkit/tasks/translation_dataset.h"

#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

namespace fs = std::filesystem;

namespace csan::tasks {

std::string read_if_exists(const std::string& path) { return fs::exists(path) ? read_file(path) : std::string(); }

TranslationDataset::TranslationDataset(const std::string& dir, const std::string& split, const std::string& src,
                                       const std::string& tgt, int64_t pad, int64_t decoder_start,
                                       const text::Dictionary& src_dict, const text::Dictionary& tgt_dict,
                                       const PositionLimits& limits, bool skip_too_long, int64_t source_prefix)
    : pairs_(dir, split, src, tgt, pad, decoder_start) {
  if (source_prefix >= 0) pairs_.set_source_prefix(source_prefix);
  pairs_.check_token_ids(src_dict.size(), dir + "/dict." + src + ".txt", tgt_dict.size(),
                         dir + "/dict." + tgt + ".txt");
  const auto &all_src = pairs_.src_sizes(), &all_tgt = pairs_.tgt_sizes();
  for (size_t i = 0; i < all_src.size(); ++i) {
    if (limits.fits(all_src[i], all_tgt[i])) continue;
    if (!skip_too_long)
      throw Error(dir + "/" + split + "." + src + "-" + tgt + ": pair " + std::to_string(i) + " has " +
                  std::to_string(all_src[i]) + " source and " + std::to_string(all_tgt[i]) +
                  " target tokens, more than the model's positions (model.max_source_positions " +
                  std::to_string(limits.source) + ", model.max_target_positions " + std::to_string(limits.target) +
                  ")");
    ++skipped_;
  }
  if (skipped_ == 0) return;
  for (size_t i = 0; i < all_src.size(); ++i) {
    if (!limits.fits(all_src[i], all_tgt[i])) continue;
    kept_.push_back(static_cast<int64_t>(i));
    src_sizes_.push_back(all_src[i]);
    tgt_sizes_.push_back(all_tgt[i]);
  }
  if (kept_.empty())
    throw Error(dir + "/" + split + "." + src + "-" + tgt + ": every pair is longer than the model's positions " +
                "(model.max_source_positions " + std::to_string(limits.source) + ", model.max_target_positions " +
                std::to_string(limits.target) + ")");
}

}  // namespace csan::tasks
