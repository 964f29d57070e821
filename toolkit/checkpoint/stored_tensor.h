// LibTorch tensors in and out of a safetensors file (toolkit/safetensors is torch-free):
// the element types both know, a tensor streamed into a Writer, and a tensor made from a
// Reader's view, copied or used where it lies in the mapping.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>

#include "toolkit/core/mapped_file.h"
#include "toolkit/safetensors/reader.h"
#include "toolkit/safetensors/writer.h"

namespace csan::checkpoint {

// The stored type of a LibTorch type; throws csan::Error naming `name` for one safetensors
// cannot hold (complex, quantized).
safetensors::Dtype stored_dtype(torch::ScalarType type, const std::string& name);
// The LibTorch type of a stored one; nullopt where LibTorch has none (U16, U32, U64, 8-bit floats).
std::optional<torch::ScalarType> torch_type(safetensors::Dtype dtype);

// Adds `tensor` under `name`. Its bytes go to the file during write() straight from a
// contiguous CPU tensor, else copied to the CPU a piece at a time (a GPU model is never
// gathered whole in host memory); the writer keeps the tensor alive until then.
void add_tensor(safetensors::Writer& writer, const std::string& name, const torch::Tensor& tensor);

// A CPU tensor holding a copy of the view's values (the caller may write it). Throws
// csan::Error "PATH: tensor 'NAME' is DTYPE, which LibTorch has no type for".
torch::Tensor copy_of(const safetensors::TensorView& view, const std::string& path);
// The view's bytes used where they lie: the tensor holds `mapping` until its storage is
// freed. A read-only mapping (the default of safetensors::Reader): the tensor must never be
// written (inference weights); a copy-on-write one: writes stay in this process.
// Needs an aligned view of a type LibTorch has.
torch::Tensor in_place(const safetensors::TensorView& view, const std::shared_ptr<const core::MappedFile>& mapping,
                       const std::string& path);

}  // namespace csan::checkpoint
