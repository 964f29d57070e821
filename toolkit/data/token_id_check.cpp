#include "toolkit/data/token_id_check.h"

#include "toolkit/core/error.h"
#include "toolkit/data/indexed_dataset_format.h"

namespace csan::data {

void check_token_ids(const MMapIndexedDataset& dataset, const std::string& prefix, int64_t dictionary_size,
                     const std::string& dictionary_name) {
  for (size_t record = 0; record < dataset.size(); ++record) {
    const std::vector<int64_t> ids = dataset.get(record);
    for (size_t position = 0; position < ids.size(); ++position) {
      const int64_t id = ids[position];
      if (id >= 0 && id < dictionary_size) continue;
      throw Error(data_path(prefix) + ": record " + std::to_string(record) + ", position " + std::to_string(position) +
                  ": token id " + std::to_string(id) + " is not in " + dictionary_name + " (" +
                  std::to_string(dictionary_size) + " entries)");
    }
  }
}

}  // namespace csan::data
