#include "toolkit/nn/projection_kind.h"

#include "toolkit/core/error.h"

namespace csan::anchors {
void link_nn();
}  // namespace csan::anchors

namespace csan::nn {

core::Registry<ProjectionKind>& projection_kinds() {
  csan::anchors::link_nn();
  static core::Registry<ProjectionKind> registry("precision");
  return registry;
}

const ProjectionKind& projection_kind(Precision precision) {
  const std::string name = precision_name(precision);
  if (!projection_kinds().contains(name))
    throw Error("internal: precision " + name +
                " has no registered projection kind (registered: " + projection_kinds().known() + ")");
  return projection_kinds().get(name);
}

}  // namespace csan::nn
