// How many CPUs this process may use. Debian's LibTorch sizes its thread pool from its own
// idea of the physical cores, which on some virtual machines is one core of several (the
// 2-core VMs this project runs on: 1), so the executables size it themselves from what
// the kernel lets the process run on: the affinity mask, capped by a cgroup CPU quota
// (containers, Slurm jobs), as `nproc` and the JVM do.
#pragma once

#include <optional>
#include <string>

namespace csan::core {

// CPUs in the affinity mask, capped by the cgroup quota; at least 1.
unsigned usable_cpu_count();

// The CPUs a cgroup v2 `cpu.max` file ("QUOTA PERIOD", or "max PERIOD" for none) allows,
// rounded up; nullopt when it sets no limit or cannot be read.
std::optional<unsigned> cgroup_cpu_limit(const std::string& cpu_max);

// "OMP_NUM_THREADS" or "MKL_NUM_THREADS", whichever is set to something (the user's choice,
// which LibTorch already follows); nullopt when neither is.
std::optional<std::string> thread_count_variable();

}  // namespace csan::core
