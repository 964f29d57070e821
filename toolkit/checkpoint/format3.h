// Checkpoint format 3's names (toolkit/safetensors/format.h describes the layout) and its
// reading. The writer is CheckpointWriter.
#pragma once

#include <string>

#include "toolkit/checkpoint/format3_names.h"
#include "toolkit/checkpoint/stored_checkpoint.h"

namespace csan::checkpoint::format3 {

// Throws csan::Error "PATH: ..." naming the tensor or metadata key at fault.
OpenedCheckpoint open(const std::string& path);

}  // namespace csan::checkpoint::format3
