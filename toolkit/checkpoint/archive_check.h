// A check of a checkpoint archive before LibTorch reads it, for files crafted behind a valid
// checksum (both found by the checkpoint fuzz target):
// - LibTorch's unpickler takes the length of a string or byte run from the file and
//   allocates and clears that much before it finds the file too short (3 GB for one
//   crafted length). Every pickle of the archive is walked and a length that runs past
//   its record is refused.
// - LibTorch compiles the archive's code/*.py records (the TorchScript class of each
//   archived module) before anything of ours runs, and its script parser crashes on some
//   class bodies (a class constant without a type). Our writer emits only class headers,
//   parameter/buffer lists and attribute annotations; any other line is refused.
#pragma once

#include <cstddef>
#include <string>

namespace csan::checkpoint {

// "" when the zip archive's pickle and code records hold only what csan writes; else what
// is wrong, naming the record (and line). Deflated records (LibTorch deflates code) are
// inflated by LibTorch's own zip reader once their declared size is plausible; records the
// walk cannot follow (zip64, a damaged directory) are left to LibTorch, which refuses them.
std::string archive_problem(const char* data, size_t size);

}  // namespace csan::checkpoint
