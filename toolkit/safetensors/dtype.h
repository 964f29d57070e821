// The element types of a safetensors file, by the names its header uses ("F32", "BF16",
// ...). All are little-endian and whole bytes; safetensors' sub-byte types (F4, F6_*) and
// the rarer 8-bit floats are refused by name when read.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace csan::safetensors {

enum class Dtype { kBool, kU8, kI8, kF8E5M2, kF8E4M3, kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kI64, kU64, kF64 };

std::string_view dtype_name(Dtype dtype);
size_t dtype_size(Dtype dtype);  // bytes per element
// The dtype a header names, or nullopt for a name csan does not read.
std::optional<Dtype> dtype_named(std::string_view name);
// Every dtype above, in the order of the enum.
const std::vector<Dtype>& all_dtypes();
// "BOOL, U8, ...": what an error about an unknown dtype lists.
std::string_view dtype_names();

}  // namespace csan::safetensors
