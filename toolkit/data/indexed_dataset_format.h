// Constants and helpers of fairseq's mmap indexed-dataset layout shared by the reader
// and the writer (see indexed_dataset.h for the byte layout).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace csan::data {

// fairseq's dtype codes. Token ids use uint16 or int32; the others load for completeness.
enum class DType : uint8_t {
  kUInt8 = 1,
  kInt8 = 2,
  kInt16 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kUInt16 = 8,
  kUInt32 = 9,
  kUInt64 = 10,
};

inline constexpr char kIndexMagic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', '\0', '\0'};
inline constexpr uint64_t kIndexVersion = 1;
// magic (9) + version (8) + dtype code (1) + sequence count (8) + doc-index count (8).
inline constexpr size_t kIndexHeaderSize = 34;

// Bytes per element, or 0 for a code this reader does not know (floats included).
size_t dtype_size(uint8_t code);
// fairseq's best_fitting_int_dtype: uint16 when every id fits below 65500, else int32.
DType dtype_for_vocab_size(size_t vocab_size);
// Byte offset of every sequence in .bin: the running sum of size * item_size.
std::vector<int64_t> sequence_pointers(const std::vector<int32_t>& sizes, size_t item_size);

inline std::string index_path(const std::string& prefix) { return prefix + ".idx"; }
inline std::string data_path(const std::string& prefix) { return prefix + ".bin"; }

}  // namespace csan::data
