// TFRecord framing, the container of TensorBoard event files. Each record is
//   uint64 length | uint32 masked CRC-32C of the length's 8 bytes | data | uint32 masked CRC-32C of data
// (little-endian). Readers stop at a record that is not complete yet, so a file a writer
// is still appending to, or one cut short by a crash, reads as its complete prefix.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace csan {

std::string frame_tfrecord(std::string_view data);

struct TfRecord {
  std::string_view data;
  size_t offset = 0;  // where the frame starts in the file
  size_t size = 0;    // of the whole frame (16 + data.size())
};

struct TfRecordScan {
  std::vector<TfRecord> records;
  size_t complete_bytes = 0;  // less than the file's size when it ends in a partial record
};

// Splits a file's bytes into records. A CRC mismatch is corruption, not a partial write:
// throws csan::Error "ORIGIN: byte N: ...".
TfRecordScan scan_tfrecords(std::string_view bytes, const std::string& origin);

}  // namespace csan
