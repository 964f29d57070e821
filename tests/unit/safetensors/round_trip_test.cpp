// Files csan writes read back bit for bit, laid out for use in place.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/unit/safetensors/safetensors_files.h"
#include "toolkit/safetensors/format.h"
#include "toolkit/safetensors/reader.h"
#include "toolkit/safetensors/writer.h"

namespace {

using namespace csan::safetensors;
using csan::testing::read_bytes;
using csan::testing::safetensors_scratch;

// Distinct bytes for every tensor, so that a swapped or shifted tensor shows.
std::string pattern(size_t size, int seed) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 37 + static_cast<size_t>(seed) * 101 + 7) & 0xFF);
  return bytes;
}

struct Expected {
  std::string name;
  Dtype dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

size_t bytes_of(Dtype dtype, const std::vector<int64_t>& shape) {
  size_t n = dtype_size(dtype);
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

TEST(SafetensorsRoundTrip, EveryDtypeWithScalarsAndEmptyTensorsReadsBackBitForBit) {
  std::vector<Expected> expected;
  int seed = 0;
  for (Dtype dtype : all_dtypes()) {
    const std::string name(dtype_name(dtype));
    for (const auto& [suffix, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
             {".matrix", {2, 3}}, {".scalar", {}}, {".empty", {0, 4}}, {".vector", {5}}})
      expected.push_back({name + suffix, dtype, shape, pattern(bytes_of(dtype, shape), seed++)});
  }
  const std::map<std::string, std::string> metadata{
      {"task", "translation"},
      {"recipe", "model:\n  arch: transformer_base\n  \"quoted\": 'x' \\ back\tslash\n"},
      {"empty", ""},
      {"unicode", "Grüße, 東京, emoji \xF0\x9F\x98\x80"},
      {"control", std::string("nul \0 bell \a", 12)},
  };
  Writer writer;
  for (const auto& [key, value] : metadata) writer.set_metadata(key, value);
  for (const auto& t : expected) writer.add(t.name, t.dtype, t.shape, t.bytes.data());
  const auto path = safetensors_scratch("every-dtype.safetensors").string();
  writer.write(path);

  const Reader reader(path, ChecksumPolicy::kRequire);
  EXPECT_TRUE(reader.checksummed());
  EXPECT_EQ(reader.metadata(), metadata);
  ASSERT_EQ(reader.tensors().size(), expected.size());
  for (const auto& t : expected) {
    const TensorView& view = reader.tensor(t.name);
    EXPECT_EQ(view.name, t.name);
    EXPECT_EQ(view.dtype, t.dtype) << t.name;
    EXPECT_EQ(view.shape, t.shape) << t.name;
    EXPECT_EQ(std::string(view.data, view.size), t.bytes) << t.name;
    EXPECT_EQ(view.elements() * static_cast<int64_t>(dtype_size(t.dtype)), static_cast<int64_t>(t.bytes.size()));
  }
  EXPECT_EQ(reader.find("no.such.tensor"), nullptr);
}

TEST(SafetensorsRoundTrip, EveryTensorIsAlignedToItsElementSizeWhereverItWasAdded) {
  // Odd sizes in an awkward order: a writer that kept this order would misalign the F64s.
  Writer writer;
  const std::vector<Expected> tensors{
      {"a.u8", Dtype::kU8, {3}, pattern(3, 1)},       {"b.f64", Dtype::kF64, {1}, pattern(8, 2)},
      {"c.bf16", Dtype::kBF16, {5}, pattern(10, 3)},  {"d.f32", Dtype::kF32, {3}, pattern(12, 4)},
      {"e.i64", Dtype::kI64, {3}, pattern(24, 5)},    {"f.bool", Dtype::kBool, {1}, pattern(1, 6)},
      {"g.i16", Dtype::kI16, {1}, pattern(2, 7)},     {"h.i32", Dtype::kI32, {1}, pattern(4, 8)},
      {"i.f64", Dtype::kF64, {2, 1}, pattern(16, 9)},
  };
  for (const auto& t : tensors) writer.add(t.name, t.dtype, t.shape, t.bytes.data());
  writer.set_metadata("odd", "makes the header an odd length");
  const auto path = safetensors_scratch("aligned.safetensors").string();
  writer.write(path);

  const std::string file = read_bytes(path);
  uint64_t header_size;
  std::memcpy(&header_size, file.data(), 8);
  EXPECT_EQ((8 + header_size) % kDataAlignment, 0u) << "the data region starts aligned";
  const std::string header = file.substr(8, header_size);
  EXPECT_EQ(header.front(), '{');
  EXPECT_EQ(header[header.find_last_not_of(' ')], '}') << "padded with spaces only";

  const Reader reader(path);
  size_t previous_size = 8;
  for (const auto& view : reader.tensors()) {
    const size_t element = dtype_size(view.dtype);
    EXPECT_TRUE(view.aligned()) << view.name;
    EXPECT_EQ(static_cast<size_t>(view.data - reader.mapping()->data()) % element, 0u) << view.name;
    EXPECT_LE(element, previous_size) << view.name << ": largest elements first";
    previous_size = element;
  }
  for (const auto& t : tensors) EXPECT_EQ(std::string(reader.tensor(t.name).data, reader.tensor(t.name).size), t.bytes);
}

TEST(SafetensorsRoundTrip, AFileWithNoTensorsAndNoMetadataIsValid) {
  const auto path = safetensors_scratch("nothing.safetensors").string();
  Writer().write(path);
  const Reader reader(path, ChecksumPolicy::kRequire);
  EXPECT_TRUE(reader.tensors().empty());
  EXPECT_TRUE(reader.metadata().empty());
  EXPECT_EQ(read_bytes(path).size() % kDataAlignment, 0u);
}

TEST(SafetensorsRoundTrip, WritingAgainReplacesTheFile) {
  const auto path = safetensors_scratch("replaced.safetensors").string();
  const std::string first = pattern(8, 1), second = pattern(4, 2);
  Writer one;
  one.add("w", Dtype::kF32, {2}, first.data());
  one.write(path);
  Writer two;
  two.add("v", Dtype::kF32, {1}, second.data());
  two.write(path);
  const Reader reader(path);
  ASSERT_EQ(reader.tensors().size(), 1u);
  EXPECT_EQ(reader.tensors()[0].name, "v");
  EXPECT_EQ(std::string(reader.tensors()[0].data, 4), second);
}

// The views stay valid as long as someone holds the mapping, e.g. a tensor that adopted them.
TEST(SafetensorsRoundTrip, TheMappingOutlivesTheReader) {
  const auto path = safetensors_scratch("outlives.safetensors").string();
  const std::string bytes = pattern(16, 3);
  Writer writer;
  writer.add("w", Dtype::kI32, {4}, bytes.data());
  writer.write(path);
  std::shared_ptr<const csan::core::MappedFile> mapping;
  const char* data = nullptr;
  {
    const Reader reader(path);
    mapping = reader.mapping();
    data = reader.tensor("w").data;
  }
  EXPECT_EQ(std::string(data, 16), bytes);
}

}  // namespace
