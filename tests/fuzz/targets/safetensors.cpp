// safetensors::Reader on arbitrary files: a malformed header or layout must be an error
// naming the file, never a read outside the mapping, and a file that reads must write back
// (csan's writer) and read again as the same tensors and metadata.
#include "../fuzz_targets.h"
#include "toolkit/core/error.h"
#include "toolkit/safetensors/checksum.h"
#include "toolkit/safetensors/reader.h"
#include "toolkit/safetensors/writer.h"

namespace csan::fuzz {

namespace {

using namespace csan::safetensors;

// Fills in the checksum that a header written like csan's reserves, so that the fuzzer gets
// past it to the rest of the reader.
void seal(std::string& file) {
  if (file.size() < kChecksumOffset + kChecksumDigits ||
      file.compare(kLengthBytes, kChecksumPrefix.size(), kChecksumPrefix) != 0)
    return;
  file.replace(kChecksumOffset, kChecksumDigits, checksum_text(file_checksum(file.data(), file.size())));
}

bool same_tensor(const TensorView& a, const TensorView& b) {
  return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.size == b.size &&
         std::string_view(a.data, a.size) == std::string_view(b.data, b.size);
}

}  // namespace

void safetensors(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const uint8_t mode = data[0];
  std::string file(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode & 1) seal(file);
  const std::string path = scratch_file("fuzz.safetensors", file);
  std::unique_ptr<Reader> reader;
  try {
    reader = std::make_unique<Reader>(path, mode & 2 ? ChecksumPolicy::kRequire : ChecksumPolicy::kVerifyIfPresent);
  } catch (const Error&) {
    return;
  }
  // Every byte of every view is read: one outside the mapping would fault here.
  size_t covered = 0;
  unsigned checksum = 0;
  for (const auto& t : reader->tensors()) {
    expect(t.elements() * static_cast<int64_t>(dtype_size(t.dtype)) == static_cast<int64_t>(t.size),
           "a view's size is not its shape's");
    for (size_t i = 0; i < t.size; ++i) checksum += static_cast<unsigned char>(t.data[i]);
    covered += t.size;
  }
  expect(reader->tensors().empty() || reader->tensors().back().data + reader->tensors().back().size ==
                                          reader->mapping()->data() + reader->mapping()->size(),
         "the last tensor does not end the file");
  expect(covered <= file.size(), "the views hold more bytes than the file");

  Writer writer;
  for (const auto& [key, value] : reader->metadata()) writer.set_metadata(key, value);
  for (const auto& t : reader->tensors()) writer.add(t.name, t.dtype, t.shape, t.data);
  const std::string again_path = scratch_file("fuzz-again.safetensors", "");
  try {
    writer.write(again_path);
  } catch (const Error& e) {
    throw InvariantBroken(std::string("what was read does not write: ") + e.what());
  }
  try {
    const Reader again(again_path, ChecksumPolicy::kRequire);
    expect(again.metadata() == reader->metadata(), "the metadata changed on a round trip");
    expect(again.tensors().size() == reader->tensors().size(), "the tensors changed on a round trip");
    for (const auto& t : reader->tensors()) {
      const TensorView* written = again.find(t.name);
      expect(written && same_tensor(*written, t), "tensor changed on a round trip");
      expect(written->aligned(), "a tensor csan wrote is not aligned");
    }
  } catch (const Error& e) {
    throw InvariantBroken(std::string("what csan wrote does not read: ") + e.what());
  }
  (void)checksum;
}

}  // namespace csan::fuzz
