// OpenBLAS chooses its kernels for the CPU it runs on, unless the environment variable
// OPENBLAS_CORETYPE names a core (read once, as the library loads). Container images and CI
// machines set it to an older core (Haswell: AVX2) so that results or old hypervisors behave
// the same everywhere; on a CPU with AVX-512 that keeps every fp32 product Debian's LibTorch
// hands to OpenBLAS at half the vector width (fp32 decoding 1.5x slower on a Zen 5 EPYC:
// docs/fast-cpu-decoding.md, "OpenBLAS's kernels"). csan does not override the user's
// setting; it says so once.
#pragma once

#include <set>
#include <string>

namespace csan::core {

// The one-line hint for a forced core (the variable's value, or null when unset) on a CPU
// with these /proc/cpuinfo flags: non-empty only when the value names a core without
// AVX-512 and the CPU has what OpenBLAS's AVX-512 kernels (SkylakeX) need.
std::string openblas_core_hint(const char* forced_core, const std::set<std::string>& cpu_flags);

// The same for this process's environment and CPU.
std::string openblas_core_hint();

}  // namespace csan::core
