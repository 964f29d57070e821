#include "toolkit/core/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace {

// The definition, one bit at a time (reflected polynomial 0x82F63B78).
uint32_t bitwise_crc32c(const std::string& bytes) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

std::string pattern(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + i / 7) & 0xFF);
  return bytes;
}

TEST(Crc32c, MatchesTheDefinitionAtEveryAlignmentAndLength) {
  const std::string bytes = pattern(300);
  for (size_t start = 0; start < 9; ++start)
    for (size_t length : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200})
      EXPECT_EQ(csan::crc32c(bytes.data() + start, length), bitwise_crc32c(bytes.substr(start, length)))
          << "start " << start << ", length " << length;
}

TEST(Crc32c, ExtendingPieceByPieceEqualsTheWhole) {
  const std::string bytes = pattern(1000);
  for (size_t cut : {0, 1, 5, 8, 333, 999, 1000}) {
    const uint32_t first = csan::crc32c(bytes.data(), cut);
    EXPECT_EQ(csan::crc32c_extend(first, bytes.data() + cut, bytes.size() - cut), csan::crc32c(bytes)) << cut;
  }
  EXPECT_EQ(csan::crc32c_extend(0, bytes.data(), bytes.size()), csan::crc32c(bytes));
}

// Long inputs take three streams joined by a shift (crc32c.cpp): lengths either side of
// their block size, at odd starts.
TEST(Crc32c, LongInputsMatchTheDefinition) {
  const std::string bytes = pattern(200100);
  for (size_t start : {0, 3})
    for (size_t length : {24575, 24576, 24577, 49165, 200000}) {
      EXPECT_EQ(csan::crc32c(bytes.data() + start, length), bitwise_crc32c(bytes.substr(start, length)))
          << "start " << start << ", length " << length;
      const uint32_t head = csan::crc32c(bytes.data() + start, 5);
      EXPECT_EQ(csan::crc32c_extend(head, bytes.data() + start + 5, length - 5),
                bitwise_crc32c(bytes.substr(start, length)))
          << "start " << start << ", length " << length << ", extended";
    }
}

}  // namespace
