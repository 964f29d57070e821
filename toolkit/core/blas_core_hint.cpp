#include "toolkit/core/blas_core_hint.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "toolkit/core/cpu_flags.h"

namespace csan::core {

namespace {

// OpenBLAS's cores with AVX-512 kernels (driver/others/dynamic.c's names, any case).
bool names_avx512_core(std::string core) {
  std::transform(core.begin(), core.end(), core.begin(), [](unsigned char c) { return std::tolower(c); });
  return core == "skylakex" || core == "cooperlake" || core == "sapphirerapids";
}

}  // namespace

std::string openblas_core_hint(const char* forced_core, const std::set<std::string>& cpu_flags) {
  if (forced_core == nullptr || *forced_core == '\0' || names_avx512_core(forced_core)) return "";
  for (const char* flag : {"avx512f", "avx512bw", "avx512dq", "avx512vl"})
    if (cpu_flags.count(flag) == 0) return "";
  return std::string("hint: OPENBLAS_CORETYPE=") + forced_core +
         " keeps OpenBLAS's fp32 matrix products off this CPU's AVX-512: unset it for faster fp32 "
         "(docs/fast-cpu-decoding.md, \"OpenBLAS's kernels\")";
}

std::string openblas_core_hint() { return openblas_core_hint(std::getenv("OPENBLAS_CORETYPE"), cpu_flags()); }

}  // namespace csan::core
