#include "toolkit/data/indexed_dataset_format.h"

namespace csan::data {

size_t dtype_size(uint8_t code) {
  switch (static_cast<DType>(code)) {
    case DType::kUInt8:
    case DType::kInt8:
      return 1;
    case DType::kInt16:
    case DType::kUInt16:
      return 2;
    case DType::kInt32:
    case DType::kUInt32:
      return 4;
    case DType::kInt64:
    case DType::kUInt64:
      return 8;
  }
  return 0;
}

DType dtype_for_vocab_size(size_t vocab_size) {
  return vocab_size < 65500 ? DType::kUInt16 : DType::kInt32;
}

std::vector<int64_t> sequence_pointers(const std::vector<int32_t>& sizes, size_t item_size) {
  std::vector<int64_t> pointers;
  pointers.reserve(sizes.size());
  int64_t address = 0;
  for (int32_t size : sizes) {
    pointers.push_back(address);
    address += static_cast<int64_t>(size) * static_cast<int64_t>(item_size);
  }
  return pointers;
}

}  // namespace csan::data
