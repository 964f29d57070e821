#include "toolkit/data/binarized_split.h"

#include "toolkit/data/indexed_dataset_writer.h"

namespace csan::data {

void BinarizedSplit::append(const BinarizedSplit& other) {
  ids.insert(ids.end(), other.ids.begin(), other.ids.end());
  sizes.insert(sizes.end(), other.sizes.begin(), other.sizes.end());
  unknown += other.unknown;
}

void write_dataset(const std::string& prefix, const BinarizedSplit& split, size_t vocab_size) {
  IndexedDatasetWriter writer(prefix, dtype_for_vocab_size(vocab_size));
  const int32_t* next = split.ids.data();
  for (int32_t size : split.sizes) {
    writer.add_item(next, static_cast<size_t>(size));
    next += size;
  }
  writer.finish();
}

}  // namespace csan::data
