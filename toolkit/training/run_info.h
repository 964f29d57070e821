// What produced a training run, for a person reading its save dir or checkpoint later:
// the command line, the toolkit version (git describe at configure time), LibTorch's
// version, the BLAS library LibTorch calls, the CPU and its vector/bf16 flags, the
// precision, thread counts, world size, task, arch and parameter count. JSON, one
// object; SAVE_DIR/run.json and every checkpoint carry it.
#pragma once

#include <cstdint>
#include <string>

#include "toolkit/core/config.h"

namespace csan::training {

std::string run_info_json(const core::Config& cfg, const std::string& command_line, int world_size, int64_t parameters);

// The BLAS library that provides sgemm_ in this process (a resolved path), or "unknown".
std::string blas_library();

}  // namespace csan::training
