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
// - LibTorch's unpickler pops its stack and grows its memo table as the file says: an
//   opcode on a too-short stack read before the stack (SEGV), a crafted memo index asked
//   for 30 GB. The walk keeps the stack's depth per mark and the memo's size.
// - LibTorch's unpickler takes a tensor's sizes, strides and offset from the file without
//   checking them against the storage they view, so one flipped size made a read run past
//   the storage (heap overflow). Every tensor of the loaded archive is checked to lie
//   inside its storage before anything reads it.
#pragma once

#include <torch/serialize/input-archive.h>

#include <cstddef>
#include <string>

namespace csan::checkpoint {

// "" when the zip archive's pickle and code records hold only what csan writes; else what
// is wrong, naming the record (and line). Deflated records (LibTorch deflates code) are
// inflated by LibTorch's own zip reader once their declared size is plausible; records the
// walk cannot follow (zip64, a damaged directory) are left to LibTorch, which refuses them.
std::string archive_problem(const char* data, size_t size);

// One pickle's problem, or "": a length past its end, a memo slot out of sequence, an
// opcode taking more values than the stack holds above its mark, no STOP.
std::string pickle_problem(const std::string& pickle);

// True when every element `t` addresses lies inside its storage (an undefined or empty
// tensor does; a sparse, quantized or storage-less one, which csan never writes, does not).
bool tensor_within_storage(const torch::Tensor& t);

// The key ("section.model.encoder.weight") of the first tensor of `archive`, its nested
// archives or their lists and tuples that does not lie within its storage; "" when none.
std::string tensor_outside_storage(torch::serialize::InputArchive& archive);

}  // namespace csan::checkpoint
