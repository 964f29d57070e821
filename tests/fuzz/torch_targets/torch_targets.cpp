#include "../fuzz_targets.h"

namespace csan::fuzz {

const std::vector<NamedTarget>& torch_targets() {
  static const std::vector<NamedTarget> targets{{"checkpoint", checkpoint}, {"torch_pickle", torch_pickle}};
  return targets;
}

}  // namespace csan::fuzz
