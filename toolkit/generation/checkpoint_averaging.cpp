#include "toolkit/generation/checkpoint_averaging.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "toolkit/core/error.h"
#include "toolkit/generation/checkpoint_ensemble.h"
#include "toolkit/training/checkpoint.h"

namespace fs = std::filesystem;

namespace csan::generation {

std::vector<std::string> last_checkpoints(const std::string& dir, int64_t count, bool by_updates,
                                          int64_t upper_bound) {
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

void average_checkpoints(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) throw Error("no checkpoints to average");
  training::CheckpointReader first(inputs[0]);
  auto average = load_model(first);
  torch::NoGradGuard no_grad;
  // Sums in double: averaging many float32 checkpoints should not lose digits.
  auto params = average->named_parameters(/*recurse=*/true);
  std::vector<torch::Tensor> sums;
  for (const auto& p : params) sums.push_back(p.value().to(torch::kDouble));
  for (size_t i = 1; i < inputs.size(); ++i) {
    training::CheckpointReader reader(inputs[i]);
    if (reader.meta().src_dict != first.meta().src_dict || reader.meta().tgt_dict != first.meta().tgt_dict ||
        reader.meta().recipe_yaml != first.meta().recipe_yaml)
      throw Error(inputs[i] + ": not from the same run as " + inputs[0] + " (recipe or dictionaries differ)");
    auto model = load_model(reader);
    auto other = model->named_parameters(/*recurse=*/true);
    for (size_t j = 0; j < params.size(); ++j) sums[j] += other[params[j].key()].to(torch::kDouble);
  }
  for (size_t j = 0; j < params.size(); ++j)
    params[j].value().copy_(sums[j] / static_cast<double>(inputs.size()));

  training::CheckpointWriter writer;
  writer.set_meta(first.meta());
  writer.set_progress(first.progress());
  writer.set_model(*average);
  writer.write(output);
}

}  // namespace csan::generation
