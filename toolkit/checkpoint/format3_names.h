// Checkpoint format 3's metadata keys and tensor name prefixes, without LibTorch (csan-preprocess
// --from-checkpoint reads a checkpoint's vocabulary through the safetensors layer alone).
#pragma once

namespace csan::checkpoint::format3 {

// __metadata__ keys.
constexpr const char* kFormat = "csan.format";
constexpr const char* kTask = "csan.task";
constexpr const char* kRecipe = "csan.recipe";
constexpr const char* kRunInfo = "csan.run_info";
constexpr const char* kProgress = "csan.progress";
constexpr const char* kOptimizer = "csan.optimizer";
constexpr const char* kSections = "csan.sections";  // JSON list of the sections' names
constexpr const char* kDataPrefix = "csan.data.";   // text entries of CheckpointMeta::data
// Tensor name prefixes (the model's tensors go under their own names).
constexpr const char* kBinaryDataPrefix = "meta.data.";  // binary entries of CheckpointMeta::data, U8
constexpr const char* kSectionPrefix = "section.";
constexpr const char* kRngPrefix = "rng.";

}  // namespace csan::checkpoint::format3
