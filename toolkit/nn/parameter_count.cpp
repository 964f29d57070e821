#include "toolkit/nn/parameter_count.h"

#include <unordered_set>

namespace csan::nn {

int64_t count_parameters(const torch::nn::Module& module) {
  std::unordered_set<const void*> seen;
  int64_t total = 0;
  for (const auto& p : module.parameters(/*recurse=*/true))
    if (seen.insert(p.unsafeGetTensorImpl()).second) total += p.numel();
  return total;
}

}  // namespace csan::nn
