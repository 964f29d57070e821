// The writer: streamed tensors, atomic replacement, and refusals that leave the old file.
#include "toolkit/safetensors/writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "tests/support/error_message.h"
#include "tests/unit/safetensors/safetensors_files.h"
#include "toolkit/core/process_memory.h"
#include "toolkit/safetensors/reader.h"

namespace {

using namespace csan::safetensors;
using csan::testing::message_of;
using csan::testing::read_bytes;
using csan::testing::safetensors_scratch;

// A fresh folder holding one valid file, for checking that a failed write leaves it.
struct OldFile {
  std::string dir, path, bytes;
  explicit OldFile(const std::string& name) {
    dir = safetensors_scratch(name).string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    path = dir + "/model.safetensors";
    const float values[2] = {1.5f, -2.0f};
    Writer writer;
    writer.add("old", Dtype::kF32, {2}, values);
    writer.set_metadata("generation", "old");
    writer.write(path);
    bytes = read_bytes(path);
  }
  size_t files_in_folder() const {
    return static_cast<size_t>(
        std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator{}));
  }
};

// The value of byte i of the streamed tensor.
char streamed_byte(size_t i) { return static_cast<char>((i ^ (i >> 11) ^ (i >> 19)) & 0xFF); }

TEST(SafetensorsWriter, StreamsALargeTensorWithoutGatheringIt) {
  constexpr size_t kBytes = size_t{96} << 20;
  constexpr size_t kPiece = size_t{1} << 20;
  const auto path = safetensors_scratch("streamed.safetensors").string();
  const double peak_before = csan::core::peak_resident_mib();
  {
    Writer writer;
    writer.add("big", Dtype::kF32, {static_cast<int64_t>(kBytes / 4)}, [&](const Writer::Sink& sink) {
      std::string piece(kPiece, '\0');  // one reused buffer: the whole tensor never exists in memory
      for (size_t at = 0; at < kBytes; at += kPiece) {
        for (size_t i = 0; i < kPiece; ++i) piece[i] = streamed_byte(at + i);
        sink(piece.data(), piece.size());
      }
    });
    writer.write(path);
  }
  const double grown = csan::core::peak_resident_mib() - peak_before;
  EXPECT_LT(grown, 24.0) << "the peak resident set grew by " << grown << " MiB writing a 96 MiB tensor";

  const Reader reader(path, ChecksumPolicy::kRequire);
  const TensorView& big = reader.tensor("big");
  ASSERT_EQ(big.size, kBytes);
  size_t wrong = 0;
  for (size_t i = 0; i < kBytes; ++i) wrong += big.data[i] != streamed_byte(i);
  EXPECT_EQ(wrong, 0u);
}

TEST(SafetensorsWriter, ProducersMayPassBytesInPiecesOfAnySize) {
  const std::string bytes = "0123456789abcdefghijklmnopqrstuv";  // 32 bytes: I64 [2, 2]
  const auto path = safetensors_scratch("pieces.safetensors").string();
  Writer writer;
  writer.add("w", Dtype::kI64, {2, 2}, [&](const Writer::Sink& sink) {
    sink(bytes.data(), 0);
    sink(bytes.data(), 1);
    sink(bytes.data() + 1, 30);
    sink(bytes.data() + 31, 1);
  });
  writer.add("empty", Dtype::kF32, {0}, [](const Writer::Sink&) {});
  writer.write(path);
  const Reader reader(path);
  EXPECT_EQ(std::string(reader.tensor("w").data, 32), bytes);
  EXPECT_EQ(reader.tensor("empty").size, 0u);
}

TEST(SafetensorsWriter, AFailingProducerLeavesThePreviousFile) {
  const OldFile old("failing-producer");
  Writer writer;
  const std::string half(8, 'x');
  writer.add("w", Dtype::kF32, {4}, [&](const Writer::Sink& sink) {
    sink(half.data(), half.size());
    throw std::runtime_error("the device went away");
  });
  EXPECT_EQ(message_of([&] { writer.write(old.path); }), old.path + ": tensor 'w': the device went away");
  EXPECT_EQ(read_bytes(old.path), old.bytes);
  EXPECT_EQ(old.files_in_folder(), 1u) << "no temporary file is left behind";
}

TEST(SafetensorsWriter, AProducerPassingTooFewOrTooManyBytesIsAnErrorAndLeavesThePreviousFile) {
  const OldFile old("wrong-byte-count");
  const std::string bytes(16, 'y');
  Writer too_few;
  too_few.add("w", Dtype::kF32, {3}, [&](const Writer::Sink& sink) { sink(bytes.data(), 4); });
  EXPECT_EQ(message_of([&] { too_few.write(old.path); }),
            old.path + ": tensor 'w': given 4 of the 12 bytes that F32 [3] holds");
  Writer too_many;
  too_many.add("w", Dtype::kF32, {3}, [&](const Writer::Sink& sink) { sink(bytes.data(), 16); });
  EXPECT_EQ(message_of([&] { too_many.write(old.path); }),
            old.path + ": tensor 'w': given more than the 12 bytes that F32 [3] holds");
  EXPECT_EQ(read_bytes(old.path), old.bytes);
  EXPECT_EQ(old.files_in_folder(), 1u);
}

TEST(SafetensorsWriter, BadNamesShapesAndStringsAreRefusedAndLeaveThePreviousFile) {
  const OldFile old("bad-inputs");
  const float value = 1.0f;
  const auto refused = [&](const std::function<void(Writer&)>& build) {
    Writer writer;
    build(writer);
    return message_of([&] { writer.write(old.path); });
  };
  const std::string p = old.path + ": ";
  EXPECT_EQ(refused([&](Writer& w) { w.set_metadata("dict", "ok \xC3\x28 bad"); }),
            p + "__metadata__ 'dict' is not valid UTF-8 (byte 3; binary data belongs in a U8 tensor)");
  EXPECT_EQ(refused([&](Writer& w) { w.set_metadata("k\xFF", "v"); }),
            p + "__metadata__ key 'k\xFF' is not valid UTF-8 (byte 1; binary data belongs in a U8 tensor)");
  EXPECT_EQ(refused([&](Writer& w) { w.set_metadata("csan.crc32c", "0"); }),
            p + "__metadata__ 'csan.crc32c' is reserved for the checksum");
  EXPECT_EQ(refused([&](Writer& w) {
              w.add("w", Dtype::kF32, {2, -1}, &value);
            }),
            p + "tensor 'w': shape [2, -1] has a negative dimension");
  EXPECT_EQ(refused([&](Writer& w) {
              w.add("w", Dtype::kF64, {int64_t{1} << 31, int64_t{1} << 31}, &value);
            }),
            p + "tensor 'w': shape [2147483648, 2147483648] has more bytes than fit in 64 bits");
  EXPECT_EQ(refused([&](Writer& w) {
              w.add("w", Dtype::kF32, {1}, &value);
              w.add("w", Dtype::kI8, {1}, &value);
              w.add("w", Dtype::kF32, {}, &value);
            }),
            p + "tensor 'w' is added twice");
  EXPECT_EQ(refused([&](Writer& w) { w.add("__metadata__", Dtype::kU8, {1}, &value); }),
            p + "tensor '__metadata__': the name is the header's metadata key");
  EXPECT_EQ(refused([&](Writer& w) { w.add("w\xC0", Dtype::kU8, {1}, &value); }),
            p + "tensor name 'w\xC0' is not valid UTF-8 (byte 1; binary data belongs in a U8 tensor)");
  EXPECT_EQ(refused([&](Writer& w) { w.add("w", Dtype::kU8, {1}, static_cast<const void*>(nullptr)); }),
            p + "tensor 'w': no data");
  EXPECT_EQ(read_bytes(old.path), old.bytes);
  EXPECT_EQ(old.files_in_folder(), 1u);
}

TEST(SafetensorsWriter, AHeaderPastSafetensorsLimitIsRefusedAndLeavesThePreviousFile) {
  const OldFile old("huge-header");
  Writer writer;
  writer.set_metadata("huge", std::string(100'000'000, 'x'));
  // 42 bytes of checksum entry, ,"huge":"..." and two closing braces, padded to 8 + N = 100000064.
  EXPECT_EQ(message_of([&] { writer.write(old.path); }),
            old.path +
                ": header of 100000056 bytes exceeds safetensors' limit of 100000000 (store large metadata as U8 "
                "tensors)");
  EXPECT_EQ(read_bytes(old.path), old.bytes);
  EXPECT_EQ(old.files_in_folder(), 1u);
}

TEST(SafetensorsWriter, AnUnwritableFolderIsAnErrorNamingThePath) {
  Writer writer;
  EXPECT_EQ(message_of([&] { writer.write("/nonexistent-folder/model.safetensors"); }),
            "/nonexistent-folder/model.safetensors: cannot write: No such file or directory");
}

}  // namespace
