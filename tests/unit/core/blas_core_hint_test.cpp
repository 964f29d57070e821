#include "toolkit/core/blas_core_hint.h"

#include <gtest/gtest.h>

using csan::core::openblas_core_hint;

namespace {
const std::set<std::string> kAvx512 = {"avx2", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16"};
const std::set<std::string> kAvx2 = {"avx", "avx2", "fma"};
}  // namespace

TEST(BlasCoreHint, ForcedOlderCoreOnAnAvx512CpuIsNamed) {
  EXPECT_EQ(openblas_core_hint("Haswell", kAvx512),
            "hint: OPENBLAS_CORETYPE=Haswell keeps OpenBLAS's fp32 matrix products off this CPU's AVX-512: unset "
            "it for faster fp32 (docs/fast-cpu-decoding.md, \"OpenBLAS's kernels\")");
  EXPECT_NE(openblas_core_hint("Zen", kAvx512), "");
  EXPECT_NE(openblas_core_hint("Prescott", kAvx512), "");
}

TEST(BlasCoreHint, NothingWhenUnsetAnAvx512CoreOrACpuWithoutAvx512) {
  EXPECT_EQ(openblas_core_hint(nullptr, kAvx512), "");
  EXPECT_EQ(openblas_core_hint("", kAvx512), "");
  EXPECT_EQ(openblas_core_hint("SkylakeX", kAvx512), "");
  EXPECT_EQ(openblas_core_hint("cooperlake", kAvx512), "");
  EXPECT_EQ(openblas_core_hint("SAPPHIRERAPIDS", kAvx512), "");
  EXPECT_EQ(openblas_core_hint("Haswell", kAvx2), "");
  // AVX-512 foundation alone (Knights Landing) is not what the SkylakeX kernels need.
  EXPECT_EQ(openblas_core_hint("Haswell", {"avx2", "avx512f", "avx512cd"}), "");
}
