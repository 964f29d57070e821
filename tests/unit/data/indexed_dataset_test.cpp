#include "toolkit/data/indexed_dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/data/indexed_dataset_writer.h"

namespace fs = std::filesystem;
using namespace csan::data;

namespace {

std::string temp_prefix(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("csan_data_idx_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// Little-endian bytes of an integer, as numpy's tobytes() / struct.pack("<..") give them.
template <typename T>
std::string le(T value) {
  std::string out(sizeof(T), '\0');
  for (size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xFF);
  return out;
}

void write_items(const std::string& prefix, DType dtype, const std::vector<std::vector<int32_t>>& items) {
  IndexedDatasetWriter writer(prefix, dtype);
  for (const auto& item : items) writer.add_item(item);
  writer.finish();
}

TEST(IndexedDataset, HeaderAndLayoutMatchFairseqBytes) {
  std::string prefix = temp_prefix("layout");
  write_items(prefix, DType::kUInt16, {{5, 6, 2}, {}, {65499, 2}});

  // fairseq MMapIndexedDataset.Index.writer: magic, <Q version 1, <B dtype code,
  // <Q len(sizes), <Q len(doc_idx), int32 sizes, int64 pointers, int64 doc_idx ([0]).
  std::string expected = std::string("MMIDIDX\0\0", 9) + le<uint64_t>(1) + le<uint8_t>(8) +
                         le<uint64_t>(3) + le<uint64_t>(1) + le<int32_t>(3) + le<int32_t>(0) +
                         le<int32_t>(2) + le<int64_t>(0) + le<int64_t>(6) + le<int64_t>(6) +
                         le<int64_t>(0);
  EXPECT_EQ(csan::read_file(prefix + ".idx"), expected);
  EXPECT_EQ(csan::read_file(prefix + ".bin"),
            le<uint16_t>(5) + le<uint16_t>(6) + le<uint16_t>(2) + le<uint16_t>(65499) + le<uint16_t>(2));
}

TEST(IndexedDataset, ReadsAFileBuiltByHandToTheSpec) {
  // What fairseq would write for [[7, 2], [1000000, 9, 2]] with int32 and one document
  // boundary after the first item.
  std::string prefix = temp_prefix("by_hand");
  std::string idx = std::string("MMIDIDX\0\0", 9) + le<uint64_t>(1) + le<uint8_t>(4) + le<uint64_t>(2) +
                    le<uint64_t>(3) + le<int32_t>(2) + le<int32_t>(3) + le<int64_t>(0) + le<int64_t>(8) +
                    le<int64_t>(0) + le<int64_t>(1) + le<int64_t>(2);
  csan::write_file_atomically(prefix + ".idx", idx);
  csan::write_file_atomically(prefix + ".bin", le<int32_t>(7) + le<int32_t>(2) + le<int32_t>(1000000) +
                                                   le<int32_t>(9) + le<int32_t>(2));
  MMapIndexedDataset ds(prefix);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds.sizes(), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(ds.get(0), (std::vector<int64_t>{7, 2}));
  EXPECT_EQ(ds.get(1), (std::vector<int64_t>{1000000, 9, 2}));
  EXPECT_EQ(ds.length(1), 3);

  // The writer reproduces those bytes exactly.
  std::string again = temp_prefix("by_hand_again");
  IndexedDatasetWriter writer(again, DType::kInt32);
  writer.add_item({7, 2});
  writer.end_document();
  writer.add_item({1000000, 9, 2});
  writer.end_document();
  writer.finish();
  EXPECT_EQ(csan::read_file(again + ".idx"), idx);
  EXPECT_EQ(csan::read_file(again + ".bin"), csan::read_file(prefix + ".bin"));
}

TEST(IndexedDataset, RoundTripManySequences) {
  std::string prefix = temp_prefix("many");
  std::vector<std::vector<int32_t>> items;
  uint32_t x = 12345;
  for (int i = 0; i < 20000; ++i) {
    std::vector<int32_t> item(i % 37);
    for (auto& id : item) id = static_cast<int32_t>((x = x * 1103515245u + 12345u) >> 17) % 65500;
    items.push_back(item);
  }
  write_items(prefix, DType::kUInt16, items);
  MMapIndexedDataset ds(prefix);
  ASSERT_EQ(ds.size(), items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    auto got = ds.get(i);
    ASSERT_EQ(std::vector<int32_t>(got.begin(), got.end()), items[i]) << i;
  }
}

TEST(IndexedDataset, LargeIdsAndLongSequences) {
  std::string prefix = temp_prefix("large");
  std::vector<int32_t> longest(1 << 20);
  for (size_t i = 0; i < longest.size(); ++i) longest[i] = static_cast<int32_t>(i * 2047);
  write_items(prefix, DType::kInt32, {longest, {2147483647, 0}});
  MMapIndexedDataset ds(prefix);
  EXPECT_EQ(ds.length(0), 1 << 20);
  auto got = ds.get(0);
  EXPECT_EQ(got[12345], 12345 * 2047);
  EXPECT_EQ(got.back(), static_cast<int64_t>(longest.size() - 1) * 2047);
  EXPECT_EQ(ds.get(1), (std::vector<int64_t>{2147483647, 0}));
  EXPECT_EQ(fs::file_size(prefix + ".bin"), (longest.size() + 2) * 4);
}

TEST(IndexedDataset, PointersBeyondFourGigabytes) {
  // Offsets are 64-bit: three near-maximal int32 sequences of int32 tokens span ~24 GiB.
  std::vector<int32_t> sizes = {2147483647, 2147483647, 5};
  EXPECT_EQ(sequence_pointers(sizes, 4),
            (std::vector<int64_t>{0, 8589934588LL, 17179869176LL}));
}

TEST(IndexedDataset, DtypeFollowsFairseqVocabularyRule) {
  EXPECT_EQ(dtype_for_vocab_size(8), DType::kUInt16);
  EXPECT_EQ(dtype_for_vocab_size(65499), DType::kUInt16);
  EXPECT_EQ(dtype_for_vocab_size(65500), DType::kInt32);
  EXPECT_EQ(dtype_size(8), 2u);
  EXPECT_EQ(dtype_size(4), 4u);
  EXPECT_EQ(dtype_size(6), 0u);  // floats are not token ids
}

TEST(IndexedDataset, WriterRejectsIdsThatDoNotFit) {
  std::string prefix = temp_prefix("overflow");
  {
    IndexedDatasetWriter writer(prefix, DType::kUInt16);
    EXPECT_THROW(writer.add_item({1, 70000}), csan::Error);
    EXPECT_THROW(writer.add_item({-1}), csan::Error);
  }  // never finished: nothing appears
  EXPECT_FALSE(fs::exists(prefix + ".bin"));
  EXPECT_FALSE(fs::exists(prefix + ".idx"));
}

TEST(IndexedDataset, CorruptFilesAreReportedByName) {
  std::string prefix = temp_prefix("corrupt");
  write_items(prefix, DType::kUInt16, {{4, 5, 2}, {6, 2}});
  const std::string idx = csan::read_file(prefix + ".idx");
  const std::string bin = csan::read_file(prefix + ".bin");
  auto message_of = [&] {
    try {
      MMapIndexedDataset ds(prefix);
    } catch (const csan::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };

  csan::write_file_atomically(prefix + ".idx", "TNTIDX\0\0" + idx.substr(8));
  EXPECT_NE(message_of().find(prefix + ".idx: not an mmap indexed dataset"), std::string::npos) << message_of();
  csan::write_file_atomically(prefix + ".idx", idx.substr(0, idx.size() - 3));
  EXPECT_NE(message_of().find(prefix + ".idx: truncated"), std::string::npos) << message_of();
  csan::write_file_atomically(prefix + ".idx", idx);
  csan::write_file_atomically(prefix + ".bin", bin.substr(0, bin.size() - 2));
  EXPECT_NE(message_of().find(prefix + ".bin: truncated"), std::string::npos) << message_of();
  fs::remove(prefix + ".bin");
  EXPECT_NE(message_of().find(prefix + ".bin: cannot open"), std::string::npos) << message_of();
  EXPECT_THROW(MMapIndexedDataset(temp_prefix("absent")), csan::Error);
}

TEST(IndexedDataset, EmptyDataset) {
  std::string prefix = temp_prefix("empty");
  write_items(prefix, DType::kUInt16, {});
  MMapIndexedDataset ds(prefix);
  EXPECT_EQ(ds.size(), 0u);
  EXPECT_EQ(fs::file_size(prefix + ".idx"), kIndexHeaderSize + 8);
}

}  // namespace
