// Writes PREFIX.bin / PREFIX.idx in fairseq's mmap indexed-dataset layout. Both files
// are written under temporary names and renamed into place only by finish(), so a
// failure never leaves a half-written dataset.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/core/atomic_file.h"
#include "toolkit/data/indexed_dataset_format.h"

namespace csan::data {

class IndexedDatasetWriter {
 public:
  IndexedDatasetWriter(std::string prefix, DType dtype);
  ~IndexedDatasetWriter();

  // Appends one sequence; throws csan::Error if an id does not fit the dtype.
  void add_item(const int32_t* ids, size_t count);
  void add_item(const std::vector<int32_t>& ids) { add_item(ids.data(), ids.size()); }
  // Marks a document boundary after the items added so far (fairseq's end_document).
  void end_document();
  // Writes the index and renames both files into place.
  void finish();

  size_t items() const { return sizes_.size(); }

 private:
  std::string prefix_;
  DType dtype_;
  std::unique_ptr<AtomicFile> data_;
  std::vector<int32_t> sizes_;
  std::vector<int64_t> doc_index_{0};
  std::string buffer_;
};

}  // namespace csan::data
