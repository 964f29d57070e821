#include "toolkit/loading/checkpoint_averaging.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/training/recipe_compat.h"

namespace fs = std::filesystem;

namespace csan::loading {

std::vector<std::string> last_checkpoints(const std::string& dir, int64_t count, bool by_updates, int64_t upper_bound) {
  if (!fs::is_directory(dir)) throw Error(dir + ": no such checkpoint directory");
  const std::regex pattern(by_updates ? R"(checkpoint_\d+_(\d+)\.pt)" : R"(checkpoint(\d+)\.pt)");
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, pattern)) continue;
    const int64_t number = std::stoll(m[1]);
    if (upper_bound < 0 || number <= upper_bound) found.emplace_back(number, entry.path().string());
  }
  if (static_cast<int64_t>(found.size()) < count)
    throw Error(dir + ": found " + std::to_string(found.size()) + " " + (by_updates ? "update" : "epoch") +
                " checkpoints, " + std::to_string(count) + " requested");
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> paths;
  for (int64_t i = 0; i < count; ++i) paths.push_back(found[i].second);
  return paths;
}

namespace {

// True when a and b name the same file: the same canonical path (symbolic links, "..",
// "./") or, for an existing file, the same inode (hard links).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec) && !ec) return true;
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

// Refused before any checkpoint is loaded: writing the average over one of its inputs
// would replace a checkpoint of the run by the average.
void check_paths(const std::vector<std::string>& inputs, const std::string& output) {
  std::error_code ec;
  for (const auto& input : inputs)
    if (fs::is_directory(input, ec))
      throw Error(input +
                  ": is a directory; give checkpoint files, or one directory with "
                  "--num-epoch-checkpoints or --num-update-checkpoints");
  if (fs::is_directory(output, ec)) throw Error(output + ": is a directory; --output is the file to write");
  for (const auto& input : inputs)
    if (same_file(input, output))
      throw Error("--output " + output + " is also one of the --inputs (" + input +
                  "); write the average to a new file");
}

// What makes two checkpoints averageable: the same task, the same data (dictionaries)
// and the same model (every model.* key of the resolved recipes). Schedule keys may
// differ: a resumed run that raised max_update still averages with its earlier
// checkpoints. Returns what differs, "" when nothing does.
std::string model_difference(const LoadedModel& a, const LoadedModel& b) {
  if (a.meta.task != b.meta.task) return "task " + a.meta.task + " vs " + b.meta.task;
  if (a.meta.data != b.meta.data) return "their data (dictionaries) differ";
  for (const auto& change : training::recipe_changes(a.config, b.config))
    if (training::defines_model(change.key))
      return "model key " + change.key + " " + change.saved + " vs " + change.current;
  return "";
}

}  // namespace

void average_checkpoints(const std::vector<std::string>& inputs, const std::string& output,
                         const DescribeModel& describe) {
  if (inputs.empty()) throw Error("no checkpoints to average");
  check_paths(inputs, output);
  checkpoint::CheckpointReader first(inputs[0]);
  const LoadedModel average = load_model(first, describe);
  torch::NoGradGuard no_grad;
  // Sums in double: averaging many float32 checkpoints should not lose digits.
  auto params = average.model->named_parameters(/*recurse=*/true);
  std::vector<torch::Tensor> sums;
  for (const auto& p : params) sums.push_back(p.value().to(torch::kDouble));
  for (size_t i = 1; i < inputs.size(); ++i) {
    const LoadedModel loaded = load_model(inputs[i], describe);
    const std::string difference = model_difference(average, loaded);
    if (!difference.empty()) throw Error(inputs[i] + ": not the same model as " + inputs[0] + " (" + difference + ")");
    auto other = loaded.model->named_parameters(/*recurse=*/true);
    for (size_t j = 0; j < params.size(); ++j) sums[j] += other[params[j].key()].to(torch::kDouble);
  }
  // New storage rather than copy_: a loaded model's weights may be views of its file's
  // read-only mapping (CheckpointReader::load_model with adopt).
  for (size_t j = 0; j < params.size(); ++j) {
    torch::Tensor& p = params[j].value();
    p.set_data((sums[j] / static_cast<double>(inputs.size())).to(p.scalar_type()));
  }

  checkpoint::CheckpointWriter writer;
  writer.set_meta(first.meta());
  writer.set_progress(first.progress());
  writer.set_model(*average.model);
  writer.write(output);
}

}  // namespace csan::loading
