#include "toolkit/data/indexed_dataset.h"

#include <cstring>

#include "toolkit/core/error.h"
#include "toolkit/core/mapped_file.h"
#include "toolkit/data/indexed_dataset_format.h"

namespace csan::data {

namespace {

template <typename T>
T read_at(const char* base, size_t offset) {
  T value;
  std::memcpy(&value, base + offset, sizeof(T));  // the index is not aligned
  return value;
}

template <typename T>
void widen(const char* src, int64_t count, std::vector<int64_t>& out) {
  for (int64_t i = 0; i < count; ++i) out.push_back(static_cast<int64_t>(read_at<T>(src, i * sizeof(T))));
}

}  // namespace

struct MMapIndexedDataset::Impl {
  Impl(const std::string& prefix) : index(index_path(prefix)), data(data_path(prefix)) {
    const std::string& idx = index_path(prefix);
    if (index.size() < kIndexHeaderSize || std::memcmp(index.data(), kIndexMagic, sizeof kIndexMagic) != 0)
      throw Error(idx + ": not an mmap indexed dataset (bad magic)");
    if (read_at<uint64_t>(index.data(), 9) != kIndexVersion)
      throw Error(idx + ": unsupported version " + std::to_string(read_at<uint64_t>(index.data(), 9)));
    dtype = static_cast<uint8_t>(index.data()[17]);
    item_size = dtype_size(dtype);
    if (item_size == 0) throw Error(idx + ": unsupported dtype code " + std::to_string(dtype));
    uint64_t count = read_at<uint64_t>(index.data(), 18);
    uint64_t doc_count = read_at<uint64_t>(index.data(), 26);
    // Guard the size arithmetic against absurd counts from a corrupt header.
    if (count > index.size() || doc_count > index.size() ||
        index.size() != kIndexHeaderSize + count * 12 + doc_count * 8)
      throw Error(idx + ": truncated or corrupt (size does not match its header)");

    sizes.resize(count);
    if (count) std::memcpy(sizes.data(), index.data() + kIndexHeaderSize, count * 4);
    pointers_offset = kIndexHeaderSize + count * 4;
    for (uint64_t i = 0; i < count; ++i) {
      int64_t pointer = pointer_of(i);
      if (sizes[i] < 0 || pointer < 0 ||
          static_cast<uint64_t>(pointer) + static_cast<uint64_t>(sizes[i]) * item_size > data.size())
        throw Error(data_path(prefix) + ": truncated (sequence " + std::to_string(i) +
                    " lies beyond the end of the file)");
    }
  }

  int64_t pointer_of(size_t i) const { return read_at<int64_t>(index.data(), pointers_offset + i * 8); }

  core::MappedFile index;
  core::MappedFile data;
  uint8_t dtype = 0;
  size_t item_size = 0;
  size_t pointers_offset = 0;
  std::vector<int32_t> sizes;
};

MMapIndexedDataset::MMapIndexedDataset(const std::string& prefix) : impl_(new Impl(prefix)) {}

MMapIndexedDataset::~MMapIndexedDataset() { delete impl_; }

size_t MMapIndexedDataset::size() const { return impl_->sizes.size(); }

int64_t MMapIndexedDataset::length(size_t i) const { return impl_->sizes.at(i); }

const std::vector<int32_t>& MMapIndexedDataset::sizes() const { return impl_->sizes; }

std::vector<int64_t> MMapIndexedDataset::get(size_t i) const {
  const int64_t count = impl_->sizes.at(i);
  const char* src = impl_->data.data() + impl_->pointer_of(i);
  std::vector<int64_t> ids;
  ids.reserve(static_cast<size_t>(count));
  switch (static_cast<DType>(impl_->dtype)) {
    case DType::kUInt8:
      widen<uint8_t>(src, count, ids);
      break;
    case DType::kInt8:
      widen<int8_t>(src, count, ids);
      break;
    case DType::kInt16:
      widen<int16_t>(src, count, ids);
      break;
    case DType::kUInt16:
      widen<uint16_t>(src, count, ids);
      break;
    case DType::kInt32:
      widen<int32_t>(src, count, ids);
      break;
    case DType::kUInt32:
      widen<uint32_t>(src, count, ids);
      break;
    case DType::kInt64:
      widen<int64_t>(src, count, ids);
      break;
    case DType::kUInt64:
      widen<uint64_t>(src, count, ids);
      break;
  }
  return ids;
}

}  // namespace csan::data
