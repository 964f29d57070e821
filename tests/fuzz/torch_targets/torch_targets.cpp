#include "../fuzz_targets.h"

namespace csan::fuzz {

const std::vector<NamedTarget>& torch_targets() {
  static const std::vector<NamedTarget> targets{{"checkpoint", checkpoint}};
  return targets;
}

}  // namespace csan::fuzz
