// data::MMapIndexedDataset on arbitrary .idx/.bin pairs: a corrupt header or pointer
// must be an error naming the file, never a read outside the mapping.
#include "toolkit/data/indexed_dataset.h"

#include "../fuzz_targets.h"
#include "toolkit/core/error.h"
#include "toolkit/data/token_id_check.h"

namespace csan::fuzz {

void indexed_dataset(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const size_t rest = size - 2;
  const size_t idx_size = std::min<size_t>(rest, data[0] | (static_cast<size_t>(data[1]) << 8));
  const char* bytes = reinterpret_cast<const char*>(data + 2);
  const std::string prefix = scratch_file("dataset.idx", std::string_view(bytes, idx_size));
  scratch_file("dataset.bin", std::string_view(bytes + idx_size, rest - idx_size));
  const std::string name = prefix.substr(0, prefix.size() - 4);
  try {
    data::MMapIndexedDataset dataset(name);
    int64_t tokens = 0;
    for (size_t i = 0; i < dataset.size(); ++i) {
      const std::vector<int64_t> ids = dataset.get(i);
      expect(static_cast<int64_t>(ids.size()) == dataset.length(i), "get(i) and length(i) disagree");
      tokens += static_cast<int64_t>(ids.size());
    }
    data::check_token_ids(dataset, name, 1000, "a 1000-entry dictionary");
  } catch (const Error&) {
  }
}

}  // namespace csan::fuzz
