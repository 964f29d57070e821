#include "toolkit/safetensors/dtype.h"

#include <array>
#include <string>

namespace csan::safetensors {

namespace {

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DtypeInfo, 15> kDtypes{{
    {Dtype::kBool, "BOOL", 1},
    {Dtype::kU8, "U8", 1},
    {Dtype::kI8, "I8", 1},
    {Dtype::kF8E5M2, "F8_E5M2", 1},
    {Dtype::kF8E4M3, "F8_E4M3", 1},
    {Dtype::kI16, "I16", 2},
    {Dtype::kU16, "U16", 2},
    {Dtype::kF16, "F16", 2},
    {Dtype::kBF16, "BF16", 2},
    {Dtype::kI32, "I32", 4},
    {Dtype::kU32, "U32", 4},
    {Dtype::kF32, "F32", 4},
    {Dtype::kI64, "I64", 8},
    {Dtype::kU64, "U64", 8},
    {Dtype::kF64, "F64", 8},
}};

constexpr bool table_follows_the_enum() {
  for (size_t i = 0; i < kDtypes.size(); ++i)
    if (static_cast<size_t>(kDtypes[i].dtype) != i) return false;
  return true;
}
static_assert(table_follows_the_enum(), "kDtypes is indexed by Dtype");

const DtypeInfo& info(Dtype dtype) { return kDtypes[static_cast<size_t>(dtype)]; }

}  // namespace

std::string_view dtype_name(Dtype dtype) { return info(dtype).name; }

size_t dtype_size(Dtype dtype) { return info(dtype).size; }

std::optional<Dtype> dtype_named(std::string_view name) {
  for (const auto& d : kDtypes)
    if (d.name == name) return d.dtype;
  return std::nullopt;
}

const std::vector<Dtype>& all_dtypes() {
  static const std::vector<Dtype> dtypes = [] {
    std::vector<Dtype> all;
    for (const auto& d : kDtypes) all.push_back(d.dtype);
    return all;
  }();
  return dtypes;
}

std::string_view dtype_names() {
  static const std::string names = [] {
    std::string joined;
    for (const auto& d : kDtypes) joined += (joined.empty() ? "" : ", ") + std::string(d.name);
    return joined;
  }();
  return names;
}

}  // namespace csan::safetensors
