#include "toolkit/checkpoint/stored_tensor.h"

#include <cstring>

#include "toolkit/core/error.h"

namespace csan::checkpoint {

namespace {

using safetensors::Dtype;

struct TypePair {
  torch::ScalarType torch;
  Dtype stored;
};

constexpr TypePair kTypes[] = {
    {torch::kBool, Dtype::kBool},  {torch::kByte, Dtype::kU8},   {torch::kChar, Dtype::kI8},
    {torch::kShort, Dtype::kI16},  {torch::kHalf, Dtype::kF16},  {torch::kBFloat16, Dtype::kBF16},
    {torch::kInt, Dtype::kI32},    {torch::kFloat, Dtype::kF32}, {torch::kLong, Dtype::kI64},
    {torch::kDouble, Dtype::kF64},
};

// Elements copied to the CPU at a time from another device.
constexpr int64_t kPieceElements = int64_t{1} << 22;

}  // namespace

safetensors::Dtype stored_dtype(torch::ScalarType type, const std::string& name) {
  for (const auto& pair : kTypes)
    if (pair.torch == type) return pair.stored;
  throw Error("checkpoint: tensor '" + name + "' has type " + std::string(c10::toString(type)) +
              ", which a checkpoint cannot store");
}

std::optional<torch::ScalarType> torch_type(safetensors::Dtype dtype) {
  for (const auto& pair : kTypes)
    if (pair.stored == dtype) return pair.torch;
  return std::nullopt;
}

void add_tensor(safetensors::Writer& writer, const std::string& name, const torch::Tensor& tensor) {
  const Dtype dtype = stored_dtype(tensor.scalar_type(), name);
  std::vector<int64_t> shape(tensor.sizes().begin(), tensor.sizes().end());
  const torch::Tensor held = tensor.detach();
  writer.add(name, dtype, std::move(shape), [held](const safetensors::Writer::Sink& sink) {
    if (held.numel() == 0) return;
    if (held.device().is_cpu()) {
      const torch::Tensor bytes = held.contiguous();
      sink(bytes.data_ptr(), bytes.nbytes());
      return;
    }
    const torch::Tensor flat = held.reshape({-1});
    for (int64_t start = 0; start < flat.numel(); start += kPieceElements) {
      const torch::Tensor piece = flat.slice(0, start, std::min(flat.numel(), start + kPieceElements)).to(torch::kCPU);
      sink(piece.data_ptr(), piece.nbytes());
    }
  });
}

namespace {

torch::ScalarType type_of(const safetensors::TensorView& view, const std::string& path) {
  const auto type = torch_type(view.dtype);
  if (!type)
    throw Error(path + ": tensor '" + view.name + "' is " + std::string(safetensors::dtype_name(view.dtype)) +
                    ", which LibTorch has no type for",
                ErrorKind::corrupt_checkpoint);
  return *type;
}

}  // namespace

torch::Tensor copy_of(const safetensors::TensorView& view, const std::string& path) {
  torch::Tensor out = torch::empty(view.shape, torch::TensorOptions().dtype(type_of(view, path)));
  if (view.size) std::memcpy(out.data_ptr(), view.data, view.size);  // memcpy: any alignment
  return out;
}

torch::Tensor in_place(const safetensors::TensorView& view, const std::shared_ptr<const core::MappedFile>& mapping,
                       const std::string& path) {
  const torch::ScalarType type = type_of(view, path);
  // LibTorch's storage is writable by type; a read-only mapping is not (PROT_READ): a write
  // faults rather than changing the file or another process's pages.
  return torch::from_blob(
      const_cast<char*>(view.data), view.shape, [mapping](void*) {}, torch::TensorOptions().dtype(type));
}

}  // namespace csan::checkpoint
