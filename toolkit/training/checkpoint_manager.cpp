#include "toolkit/training/checkpoint_manager.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <system_error>

#include "toolkit/core/error.h"

namespace fs = std::filesystem;

namespace csan::training {

CheckpointPolicy checkpoint_policy(const core::Config& cfg) {
  CheckpointPolicy policy;
  policy.save_dir = cfg.get<std::string>("checkpoint.save_dir");
  policy.save_interval = cfg.get<int64_t>("checkpoint.save_interval");
  policy.save_interval_updates = cfg.get<int64_t>("checkpoint.save_interval_updates");
  policy.keep_interval_updates = cfg.get<int64_t>("checkpoint.keep_interval_updates");
  policy.keep_last_epochs = cfg.get<int64_t>("checkpoint.keep_last_epochs");
  policy.no_epoch_checkpoints = cfg.get<bool>("checkpoint.no_epoch_checkpoints");
  return policy;
}

std::vector<std::string> checkpoint_names(const CheckpointPolicy& p, int64_t epoch, int64_t num_updates,
                                          bool end_of_epoch, bool improved_best) {
  std::vector<std::string> names;
  if (end_of_epoch && !p.no_epoch_checkpoints && epoch % p.save_interval == 0)
    names.push_back("checkpoint" + std::to_string(epoch) + ".pt");
  if (!end_of_epoch && p.save_interval_updates > 0 && num_updates % p.save_interval_updates == 0)
    names.push_back("checkpoint_" + std::to_string(epoch) + "_" + std::to_string(num_updates) + ".pt");
  if (improved_best) names.push_back("checkpoint_best.pt");
  names.push_back("checkpoint_last.pt");
  return names;
}

void link_checkpoint_copies(const std::string& save_dir, const std::string& written,
                            const std::vector<std::string>& names) {
  const fs::path source = fs::path(save_dir) / written;
  for (const auto& name : names) {
    if (name == written) continue;
    const fs::path target = fs::path(save_dir) / name;
    const fs::path temp = fs::path(save_dir) / (name + ".tmp-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove(temp, ec);
    fs::create_hard_link(source, temp, ec);
    if (ec) fs::copy_file(source, temp, fs::copy_options::overwrite_existing);  // no hard links here
    fs::rename(temp, target);
  }
}

namespace {
// Files matching `pattern` in dir, sorted by the captured numbers, newest last.
std::vector<std::pair<std::vector<int64_t>, fs::path>> numbered(const std::string& dir, const std::regex& pattern) {
  std::vector<std::pair<std::vector<int64_t>, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, pattern)) continue;
    std::vector<int64_t> key;
    for (size_t i = 1; i < m.size(); ++i) key.push_back(std::stoll(m[i].str()));
    found.emplace_back(std::move(key), entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

void keep_newest(const std::string& dir, const std::regex& pattern, int64_t keep) {
  if (keep <= 0) return;  // fairseq: 0 or -1 keep everything
  auto files = numbered(dir, pattern);
  for (size_t i = 0; i + static_cast<size_t>(keep) < files.size(); ++i) fs::remove(files[i].second);
}
}  // namespace

void prune_checkpoints(const CheckpointPolicy& p) {
  // Update checkpoints sort by update count (the second number).
  keep_newest(p.save_dir, std::regex(R"(checkpoint_\d+_(\d+)\.pt)"), p.keep_interval_updates);
  keep_newest(p.save_dir, std::regex(R"(checkpoint(\d+)\.pt)"), p.keep_last_epochs);
}

}  // namespace csan::training
