#include "toolkit/safetensors/reader.h"

#include <cstring>

#include "toolkit/core/error.h"
#include "toolkit/safetensors/checksum.h"
#include "toolkit/safetensors/format.h"
#include "toolkit/safetensors/header.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors files are little-endian, read in place");

namespace csan::safetensors {

namespace {


// The digits of csan's checksum when the header starts as csan writes it, else "".
std::string_view stored_checksum(const char* file, size_t header_end) {
  if (header_end < kChecksumOffset + kChecksumDigits + 1) return {};
  if (std::memcmp(file + kLengthBytes, kChecksumPrefix.data(), kChecksumPrefix.size()) != 0) return {};
  if (file[kChecksumOffset + kChecksumDigits] != '"') return {};
  return {file + kChecksumOffset, kChecksumDigits};
}

}  // namespace

int64_t TensorView::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // the header check bounded the product by the file's size
  return n;
}

bool TensorView::aligned() const { return reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0; }

Reader::Reader(const std::string& path, ChecksumPolicy policy, core::MappedFile::Access access)
    : path_(path), mapping_(std::make_shared<const core::MappedFile>(path, access)) {
  const char* const file = mapping_->data();
  const size_t size = mapping_->size();
  if (size < kLengthBytes)
    fail(path, "not a safetensors file (" + std::to_string(size) + " bytes, shorter than the 8-byte header length)");
  uint64_t header_size;
  std::memcpy(&header_size, file, kLengthBytes);
  if (header_size < 2) fail(path, "header length " + std::to_string(header_size) + " is too small for a JSON object");
  if (header_size > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(header_size) + " exceeds safetensors' limit of " +
                   std::to_string(kMaxHeaderBytes) + " bytes (not a safetensors file?)");
  if (header_size > size - kLengthBytes)
    fail(path, "header length " + std::to_string(header_size) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes; truncated?)");
  const size_t header_end = kLengthBytes + static_cast<size_t>(header_size);

  // Before the header is parsed, so that a damaged byte anywhere is reported as damage.
  const std::string_view digits = stored_checksum(file, header_end);
  if (!digits.empty()) {
    const auto stored = checksum_from_text(digits);
    if (!stored) fail(path, "checksum " + in_quotes(digits) + " is not eight lowercase hex digits (corrupt file)");
    const core::MappedFile& mapped = *mapping_;
    const uint32_t computed =
        file_checksum(file, size, [&mapped](size_t offset, size_t n) { mapped.release(offset, n); });
    if (computed != *stored)
      fail(path, "checksum mismatch (stored crc32c " + std::string(digits) + ", computed " + checksum_text(computed) +
                     "): the file is corrupt");
    checksummed_ = true;
  }

  Header header =
      parse_header(std::string_view(file + kLengthBytes, static_cast<size_t>(header_size)), size - header_end, path);
  const auto checksum_entry = header.metadata.find(std::string(kChecksumKey));
  if (checksum_entry != header.metadata.end()) {
    // Only where csan writes it can it be checked (the header's text is part of the sum).
    if (!checksummed_)
      fail(path, std::string(kMetadataKey) + " " + in_quotes(kChecksumKey) +
                     " is not at the start of the header, where csan writes it: the file was rewritten by another "
                     "program and cannot be verified");
    header.metadata.erase(checksum_entry);
  } else if (policy == ChecksumPolicy::kRequire) {
    fail(path, "has no csan checksum (" + std::string(kMetadataKey) + " " + in_quotes(kChecksumKey) +
                   "): not written by csan, or damaged");
  }
  metadata_ = std::move(header.metadata);

  const char* const data = file + header_end;
  tensors_.reserve(header.tensors.size());
  for (auto& entry : header.tensors) {
    index_.emplace(entry.name, tensors_.size());
    tensors_.push_back({std::move(entry.name), entry.dtype, std::move(entry.shape), data + entry.begin,
                        static_cast<size_t>(entry.end - entry.begin)});
  }
}

const TensorView* Reader::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const TensorView& Reader::tensor(const std::string& name) const {
  const TensorView* view = find(name);
  if (!view) fail(path_, "no tensor " + in_quotes(name));
  return *view;
}

}  // namespace csan::safetensors
