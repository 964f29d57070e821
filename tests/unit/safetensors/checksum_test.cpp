// csan's checksum: what it covers, where it lies, and that any damaged byte is refused.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/support/error_message.h"
#include "tests/unit/safetensors/safetensors_files.h"
#include "toolkit/core/crc32c.h"
#include "toolkit/safetensors/reader.h"
#include "toolkit/safetensors/writer.h"

namespace {

using namespace csan::safetensors;
using csan::testing::message_of;
using csan::testing::read_bytes;
using csan::testing::safetensors_bytes;
using csan::testing::safetensors_scratch;
using csan::testing::write_bytes;

std::string small_file() {
  const auto path = safetensors_scratch("small.safetensors").string();
  const int64_t steps[1] = {12345};
  const float weights[6] = {0.5f, -1.0f, 2.0f, 3.25f, -0.125f, 8.0f};
  const uint8_t rng[5] = {1, 2, 3, 4, 5};
  Writer writer;
  writer.set_metadata("task", "translation");
  writer.add("optimizer.step", Dtype::kI64, {}, steps);
  writer.add("encoder.weight", Dtype::kF32, {2, 3}, weights);
  writer.add("rng.cpu", Dtype::kU8, {5}, rng);
  writer.write(path);
  return read_bytes(path);
}

TEST(SafetensorsChecksum, IsTheCrc32cOfTheWholeFileWithItsDigitsAsZerosAndOpensTheHeader) {
  std::string file = small_file();
  const std::string prefix = R"({"__metadata__":{"csan.crc32c":")";
  ASSERT_EQ(file.substr(8, prefix.size()), prefix);
  const size_t at = 8 + prefix.size();
  const std::string stored = file.substr(at, 8);
  file.replace(at, 8, "00000000");
  char expected[9];
  std::snprintf(expected, sizeof expected, "%08x", csan::crc32c(file));
  EXPECT_EQ(stored, expected);
}

TEST(SafetensorsChecksum, FlippingAnyOneByteOfTheFileIsRefused) {
  const std::string file = small_file();
  uint64_t header_size;
  std::memcpy(&header_size, file.data(), 8);
  const size_t after_digits = 8 + std::strlen(R"({"__metadata__":{"csan.crc32c":")") + 8 + 1;
  for (size_t i = 0; i < file.size(); ++i) {
    for (unsigned char bit : {0x01, 0x80}) {
      std::string damaged = file;
      damaged[i] = static_cast<char>(damaged[i] ^ bit);
      const auto path = write_bytes("damaged.safetensors", damaged);
      const std::string message = message_of([&] { Reader reader(path, ChecksumPolicy::kRequire); });
      EXPECT_NE(message, "") << "byte " << i << " flipped by " << int(bit) << " went unnoticed";
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      // Past the checksum field, every flip is reported as what it is.
      if (i >= after_digits) {
        EXPECT_EQ(message.rfind(path + ": checksum mismatch (stored crc32c ", 0), 0u)
            << "byte " << i << ": " << message;
      }
    }
  }
}

TEST(SafetensorsChecksum, AFileOfAnotherWriterHasNoneAndReadsUnlessOneIsRequired) {
  const std::string data(4, '\x01');
  const auto path = write_bytes("unchecked.safetensors",
                                safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", data));
  const Reader reader(path);
  EXPECT_FALSE(reader.checksummed());
  EXPECT_EQ(reader.tensor("w").size, 4u);
  EXPECT_EQ(message_of([&] { Reader required(path, ChecksumPolicy::kRequire); }),
            path + ": has no csan checksum (__metadata__ 'csan.crc32c'): not written by csan, or damaged");
}

TEST(SafetensorsChecksum, OneThatIsNotWhereCsanWritesItCannotBeVerifiedAndIsRefused) {
  const auto path = write_bytes("moved-checksum.safetensors",
                                safetensors_bytes(R"({"__metadata__":{"a":"b","csan.crc32c":"00000000"}})"));
  EXPECT_EQ(message_of([&] { Reader reader(path); }),
            path +
                ": __metadata__ 'csan.crc32c' is not at the start of the header, where csan writes it: the file was "
                "rewritten by another program and cannot be verified");
}

TEST(SafetensorsChecksum, DigitsThatAreNotLowercaseHexAreRefused) {
  std::string file = small_file();
  file.replace(8 + std::strlen(R"({"__metadata__":{"csan.crc32c":")"), 8, "0000000G");
  const auto path = write_bytes("bad-digits.safetensors", file);
  EXPECT_EQ(message_of([&] { Reader reader(path); }),
            path + ": checksum '0000000G' is not eight lowercase hex digits (corrupt file)");
}

TEST(SafetensorsChecksum, IsNotPartOfTheMetadataReadBack) {
  const auto path = write_bytes("metadata.safetensors", small_file());
  const Reader reader(path);
  EXPECT_TRUE(reader.checksummed());
  EXPECT_EQ(reader.metadata(), (std::map<std::string, std::string>{{"task", "translation"}}));
}

}  // namespace
