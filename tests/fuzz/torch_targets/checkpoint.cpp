// checkpoint::CheckpointReader on a checkpoint file. The first byte chooses what the rest
// of the input is:
//   0: a format 1/2 archive, to which the target appends a correct checksum trailer, so
//      that the fuzzer reaches the archive and meta parsing behind the checksum (a file
//      crafted rather than damaged);
//   1: a whole file as stored, which the checksums must turn away unless it is intact;
//   2: edits (2-byte offset, 1 byte to xor) to a valid format 3 checkpoint of a small
//      model, then resealed (csan's checksum recomputed where the header still starts
//      with it): damage near a real file, where parsers break most often.
// Whatever opens must also answer every question a caller asks of it (meta, progress,
// sections, weights into the model) with values or a csan::Error.
#include "toolkit/checkpoint/checkpoint.h"

#include <torch/torch.h>

#include "../fuzz_targets.h"
#include "toolkit/checkpoint/legacy_archive.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/safetensors/checksum.h"

namespace csan::fuzz {

namespace {

torch::nn::Linear small_model() { return torch::nn::Linear(3, 2); }

// A valid format 3 checkpoint, written once.
const std::string& valid_checkpoint() {
  static const std::string bytes = [] {
    checkpoint::CheckpointWriter writer;
    checkpoint::CheckpointMeta meta;
    meta.task = "translation";
    meta.recipe_yaml = "model:\n  arch: transformer_tiny\n";
    meta.data = {{"src_dict", "a 1\nb 1\n"}, {"tgt_dict", "c 1\n"}};
    writer.set_meta(meta);
    writer.set_progress({});
    writer.set_model(*small_model());
    const std::string path = scratch_file("valid.pt", "");
    writer.write(path);
    return read_file(path);
  }();
  return bytes;
}

// Recomputes csan's checksum of a format 3 file whose header still starts as csan writes it.
void reseal(std::string& file) {
  using namespace safetensors;
  if (file.size() < kChecksumOffset + kChecksumDigits ||
      file.compare(kLengthBytes, kChecksumPrefix.size(), kChecksumPrefix) != 0)
    return;
  const std::string digits = checksum_text(file_checksum(file.data(), file.size()));
  file.replace(kChecksumOffset, kChecksumDigits, digits);
}

}  // namespace

void checkpoint(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string file;
  switch (data[0] % 3) {
    case 0:
      file = rest;
      checkpoint::append_trailer(file);
      break;
    case 1:
      file = rest;
      break;
    default:
      file = valid_checkpoint();
      for (size_t i = 0; i + 3 <= rest.size(); i += 3) {
        const size_t offset = (static_cast<uint8_t>(rest[i]) | static_cast<uint8_t>(rest[i + 1]) << 8) % file.size();
        file[offset] = static_cast<char>(file[offset] ^ rest[i + 2]);
      }
      reseal(file);
  }
  const std::string path = scratch_file("fuzz.pt", file);
  torch::NoGradGuard no_grad;
  try {
    checkpoint::CheckpointReader reader(path);
    (void)reader.meta().get("src_dict");
    (void)reader.progress();
    (void)reader.has_section("precision");
    auto model = small_model();
    reader.load_model(*model);
  } catch (const Error& e) {
    // The untouched valid checkpoint must load.
    expect(!(data[0] % 3 == 2 && rest.size() < 3), std::string("the valid checkpoint does not load: ") + e.what());
  }
}

}  // namespace csan::fuzz
