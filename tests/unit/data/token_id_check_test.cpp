#include "toolkit/data/token_id_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "toolkit/core/error.h"
#include "toolkit/data/indexed_dataset_writer.h"

namespace fs = std::filesystem;
using namespace csan::data;

namespace {

std::string dataset(const std::string& name, DType dtype, const std::vector<std::vector<int32_t>>& items) {
  fs::path dir = fs::temp_directory_path() / ("csan_data_ids_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string prefix = (dir / name).string();
  IndexedDatasetWriter writer(prefix, dtype);
  for (const auto& item : items) writer.add_item(item);
  writer.finish();
  return prefix;
}

std::string error_of(const std::string& prefix, int64_t dictionary_size, const std::string& name = "the dictionary") {
  MMapIndexedDataset ds(prefix);
  try {
    check_token_ids(ds, prefix, dictionary_size, name);
  } catch (const csan::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TokenIdCheck, IdsInsideTheDictionaryPass) {
  const auto prefix = dataset("inside", DType::kUInt16, {{4, 5, 2}, {}, {7, 2}});
  EXPECT_EQ(error_of(prefix, 8), "no error");
}

// The first id at or past the dictionary's size names the file, the record, the position
// and the dictionary.
TEST(TokenIdCheck, IdPastTheEndNamesFileRecordAndId) {
  const auto prefix = dataset("past_end", DType::kUInt16, {{4, 5, 2}, {6, 2}, {4, 9, 8, 2}});
  EXPECT_EQ(error_of(prefix, 8, "dict.de.txt"),
            prefix + ".bin: record 2, position 1: token id 9 is not in dict.de.txt (8 entries)");
  EXPECT_EQ(error_of(prefix, 9),
            prefix + ".bin: record 2, position 1: token id 9 is not in the dictionary (9 entries)");
  EXPECT_EQ(error_of(prefix, 10), "no error");
}

TEST(TokenIdCheck, NegativeIdsOfSignedTypesAreCaught) {
  const auto prefix = dataset("negative", DType::kInt32, {{4, 2}, {-3, 2}});
  EXPECT_EQ(error_of(prefix, 100),
            prefix + ".bin: record 1, position 0: token id -3 is not in the dictionary (100 entries)");
}

}  // namespace
