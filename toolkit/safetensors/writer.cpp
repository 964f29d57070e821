#include "toolkit/safetensors/writer.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/crc32c.h"
#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"
#include "toolkit/safetensors/checksum.h"
#include "toolkit/safetensors/format.h"
#include "toolkit/safetensors/header.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors files are little-endian, written as held");

namespace csan::safetensors {

namespace {


// A failure of the file itself inside a producer's sink: reported as it is, not as the
// producer's.
struct SinkFailure : Error {
  using Error::Error;
};

void check_utf8(const std::string& text, const std::string& what, const std::string& path) {
  const size_t bad = utf8::find_invalid(text);
  if (bad != std::string::npos)
    fail(path, what + " is not valid UTF-8 (byte " + std::to_string(bad) + "; binary data belongs in a U8 tensor)");
}

std::string json_string(const std::string& text) { return nlohmann::json(text).dump(); }

}  // namespace

void Writer::set_metadata(const std::string& key, std::string value) { metadata_[key] = std::move(value); }

void Writer::add(const std::string& name, Dtype dtype, std::vector<int64_t> shape, const void* data) {
  tensors_.push_back({name, dtype, std::move(shape), data, {}});
}

void Writer::add(const std::string& name, Dtype dtype, std::vector<int64_t> shape, Producer produce) {
  tensors_.push_back({name, dtype, std::move(shape), nullptr, std::move(produce)});
}

void Writer::write(const std::string& path) const {
  for (const auto& [key, value] : metadata_) {
    check_utf8(key, std::string(kMetadataKey) + " key " + in_quotes(key), path);
    check_utf8(value, std::string(kMetadataKey) + " " + in_quotes(key), path);
    if (key == kChecksumKey)
      fail(path, std::string(kMetadataKey) + " " + in_quotes(key) + " is reserved for the checksum");
  }
  std::vector<uint64_t> bytes(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    const std::string tensor = "tensor " + in_quotes(t.name);
    check_utf8(t.name, "tensor name " + in_quotes(t.name), path);
    if (t.name == kMetadataKey) fail(path, tensor + ": the name is the header's metadata key");
    uint64_t n = dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      if (d < 0) fail(path, tensor + ": shape " + shape_text(t.shape) + " has a negative dimension");
      if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
        fail(path, tensor + ": shape " + shape_text(t.shape) + " has more bytes than fit in 64 bits");
    }
    if (!t.produce && !t.data && n > 0) fail(path, tensor + ": no data");
    bytes[i] = n;
  }

  // Largest elements first: each tensor's offset is then a multiple of its element size.
  std::vector<size_t> order(tensors_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const size_t size_a = dtype_size(tensors_[a].dtype), size_b = dtype_size(tensors_[b].dtype);
    return size_a != size_b ? size_a > size_b : tensors_[a].name < tensors_[b].name;
  });
  for (size_t i = 1; i < order.size(); ++i)
    if (tensors_[order[i]].name == tensors_[order[i - 1]].name)
      fail(path, "tensor " + in_quotes(tensors_[order[i]].name) + " is added twice");

  // The checksum entry first (checksum.h), with zeros until the data has been written.
  std::string header(kChecksumPrefix);
  header += std::string(kChecksumDigits, '0') + "\"";
  for (const auto& [key, value] : metadata_) header += "," + json_string(key) + ":" + json_string(value);
  header += "}";
  uint64_t offset = 0;
  for (size_t i : order) {
    const Tensor& t = tensors_[i];
    uint64_t end;
    if (__builtin_add_overflow(offset, bytes[i], &end)) fail(path, "the tensors hold more bytes than fit in 64 bits");
    header += "," + json_string(t.name) + ":{\"dtype\":\"" + std::string(dtype_name(t.dtype)) +
              "\",\"shape\":" + nlohmann::json(t.shape).dump() + ",\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(end) + "]}";
    offset = end;
  }
  header += "}";
  // Spaces, which JSON ignores, move the data's start to the alignment.
  header.append((kDataAlignment - (kLengthBytes + header.size()) % kDataAlignment) % kDataAlignment, ' ');
  if (header.size() > kMaxHeaderBytes)
    fail(path, "header of " + std::to_string(header.size()) + " bytes exceeds safetensors' limit of " +
                   std::to_string(kMaxHeaderBytes) + " (store large metadata as U8 tensors)");

  AtomicFile out(path, FileWrites::straight_to_disk);
  uint32_t crc = 0;
  const auto emit = [&](const void* data, size_t size) {
    out.write(data, size);
    crc = crc32c_extend(crc, data, size);
  };
  const uint64_t header_size = header.size();
  char length[kLengthBytes];
  std::memcpy(length, &header_size, kLengthBytes);
  emit(length, kLengthBytes);
  emit(header.data(), header.size());
  for (size_t i : order) {
    const Tensor& t = tensors_[i];
    if (!t.produce) {
      emit(t.data, bytes[i]);
      continue;
    }
    const std::string tensor = "tensor " + in_quotes(t.name);
    const std::string holds = std::to_string(bytes[i]) + " bytes that " + std::string(dtype_name(t.dtype)) + " " +
                              shape_text(t.shape) + " holds";
    uint64_t passed = 0;
    const Sink sink = [&](const void* data, size_t size) {
      if (size > bytes[i] - passed) throw SinkFailure(path + ": " + tensor + ": given more than the " + holds);
      try {
        emit(data, size);
      } catch (const Error& e) {
        throw SinkFailure(e.what());
      }
      passed += size;
    };
    try {
      t.produce(sink);
    } catch (const SinkFailure&) {
      throw;
    } catch (const std::exception& e) {
      fail(path, tensor + ": " + e.what());
    }
    if (passed != bytes[i]) fail(path, tensor + ": given " + std::to_string(passed) + " of the " + holds);
  }
  const std::string digits = checksum_text(crc);
  out.overwrite(kChecksumOffset, digits.data(), digits.size());
  out.commit();
}

}  // namespace csan::safetensors
