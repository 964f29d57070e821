// fp32: the projections keep their trainable parameters (nn::linear multiplies them), so
// the kind converts nothing and an inference checkpoint has nothing to store.
#include "toolkit/core/registry.h"
#include "toolkit/nn/projection_kind.h"

CSAN_REGISTRATION_ANCHOR(fp32_projection)

namespace csan::nn {
namespace {

ProjectionKind fp32_kind() {
  ProjectionKind kind;
  kind.precision = Precision::fp32;
  return kind;
}

const core::Registrar<ProjectionKind> register_fp32(projection_kinds(), precision_name(Precision::fp32), fp32_kind());

}  // namespace
}  // namespace csan::nn
