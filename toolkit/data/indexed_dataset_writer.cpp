#include "toolkit/data/indexed_dataset_writer.h"

#include <cstring>
#include <limits>

#include "toolkit/core/error.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the .bin/.idx format is little-endian; this writer stores native integers");

namespace csan::data {

namespace {

constexpr size_t kFlushBytes = 1 << 20;

template <typename T>
void append_as(std::string& out, const int32_t* ids, size_t count, const std::string& prefix) {
  size_t offset = out.size();
  out.resize(offset + count * sizeof(T));
  char* dst = out.data() + offset;
  for (size_t i = 0; i < count; ++i) {
    int64_t id = ids[i];
    if (id < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        id > static_cast<int64_t>(std::numeric_limits<T>::max()))
      throw Error(data_path(prefix) + ": token id " + std::to_string(id) +
                  " does not fit the dataset's integer type");
    T value = static_cast<T>(id);
    std::memcpy(dst + i * sizeof(T), &value, sizeof(T));
  }
}

template <typename T>
void append_raw(std::string& out, const T* values, size_t count) {
  out.append(reinterpret_cast<const char*>(values), count * sizeof(T));
}

}  // namespace

IndexedDatasetWriter::IndexedDatasetWriter(std::string prefix, DType dtype)
    : prefix_(std::move(prefix)), dtype_(dtype) {
  if (dtype_size(static_cast<uint8_t>(dtype)) == 0) throw Error(prefix_ + ": unsupported dtype");
  data_ = std::make_unique<AtomicFile>(data_path(prefix_));
}

IndexedDatasetWriter::~IndexedDatasetWriter() = default;

void IndexedDatasetWriter::add_item(const int32_t* ids, size_t count) {
  if (!data_) throw Error(prefix_ + ": dataset already finished");
  if (count > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw Error(prefix_ + ": sequence too long for the index");
  switch (dtype_) {
    case DType::kUInt8: append_as<uint8_t>(buffer_, ids, count, prefix_); break;
    case DType::kInt8: append_as<int8_t>(buffer_, ids, count, prefix_); break;
    case DType::kInt16: append_as<int16_t>(buffer_, ids, count, prefix_); break;
    case DType::kUInt16: append_as<uint16_t>(buffer_, ids, count, prefix_); break;
    case DType::kInt32: append_as<int32_t>(buffer_, ids, count, prefix_); break;
    case DType::kUInt32: append_as<uint32_t>(buffer_, ids, count, prefix_); break;
    case DType::kInt64: append_as<int64_t>(buffer_, ids, count, prefix_); break;
    case DType::kUInt64: append_as<uint64_t>(buffer_, ids, count, prefix_); break;
  }
  sizes_.push_back(static_cast<int32_t>(count));
  if (buffer_.size() >= kFlushBytes) {
    data_->write(buffer_);
    buffer_.clear();
  }
}

void IndexedDatasetWriter::end_document() {
  doc_index_.push_back(static_cast<int64_t>(sizes_.size()));
}

void IndexedDatasetWriter::finish() {
  if (!data_) throw Error(prefix_ + ": dataset already finished");
  data_->write(buffer_);
  buffer_.clear();

  std::string index;
  index.append(kIndexMagic, sizeof kIndexMagic);
  const uint64_t version = kIndexVersion;
  append_raw(index, &version, 1);
  index.push_back(static_cast<char>(dtype_));
  const uint64_t count = sizes_.size(), doc_count = doc_index_.size();
  append_raw(index, &count, 1);
  append_raw(index, &doc_count, 1);
  append_raw(index, sizes_.data(), sizes_.size());
  auto pointers = sequence_pointers(sizes_, dtype_size(static_cast<uint8_t>(dtype_)));
  append_raw(index, pointers.data(), pointers.size());
  append_raw(index, doc_index_.data(), doc_index_.size());

  AtomicFile index_file(index_path(prefix_));
  index_file.write(index);
  data_->commit();
  index_file.commit();
  data_.reset();
}

}  // namespace csan::data
