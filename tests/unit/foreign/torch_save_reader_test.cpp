// read_torch_save (toolkit/foreign/pickle_reader.h) uses a torch.save() archive's storages
// where they lie in the file: tensors sharing a storage share memory, a change made in place
// stays in this process (the map is copy-on-write: the file never changes), and a storage
// whose pickle claims more bytes than lie before the next record is an error naming the file.
#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "toolkit/core/error.h"
#include "toolkit/foreign/pickle_reader.h"
#include "toolkit/foreign/torch_save_writer.h"
#include "tests/support/text_files.h"

namespace fs = std::filesystem;
using namespace csan::foreign;
using csan::testing::slurp;

namespace {

const torch::Tensor& entry(const PicklePtr& root, const std::string& name) {
  const PickleValue* value = root->find(name);
  EXPECT_NE(value, nullptr) << name;
  return value->tensor;
}

class TorchSaveReader : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("csan_torch_save_reader_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(TorchSaveReader, StoragesAreReadInPlaceAndCopiedOnWrite) {
  const torch::Tensor weight = torch::arange(12, torch::kFloat).view({3, 4});
  const torch::Tensor row = weight[1];  // a view of the same storage
  write_torch_save(*pickle_dict({{"weight", pickle_tensor(weight)}, {"row", pickle_tensor(row)}}), at("x.pt"));
  const std::string before = slurp(at("x.pt"));

  const PicklePtr root = read_torch_save(at("x.pt"));
  torch::Tensor read_weight = entry(root, "weight"), read_row = entry(root, "row");
  EXPECT_TRUE(torch::equal(read_weight, weight));
  EXPECT_TRUE(torch::equal(read_row, row));
  // One storage in the file, one memory here.
  EXPECT_EQ(read_row.data_ptr<float>(), read_weight.data_ptr<float>() + 4);

  read_weight.mul_(2);  // a read-only map would fault here
  EXPECT_TRUE(torch::equal(read_row, row * 2));
  EXPECT_EQ(slurp(at("x.pt")), before);
  EXPECT_TRUE(torch::equal(entry(read_torch_save(at("x.pt")), "weight"), weight));
}

TEST_F(TorchSaveReader, TensorsOutliveTheReader) {
  const torch::Tensor weight = torch::randn({64, 8});
  write_torch_save(*pickle_dict({{"weight", pickle_tensor(weight)}}), at("x.pt"));
  torch::Tensor kept = entry(read_torch_save(at("x.pt")), "weight");  // the tree is gone here
  fs::remove(at("x.pt"));                                              // the map holds the file
  EXPECT_TRUE(torch::equal(kept, weight));
}

// An archive with the pickle of a 64-float storage but a record of 8 bytes: the claim reaches
// into the next record.
TEST_F(TorchSaveReader, StorageLongerThanItsRecordIsRefused) {
  write_torch_save(*pickle_dict({{"weight", pickle_tensor(torch::ones({64}))}}), at("good.pt"));
  std::string pickle;
  {
    caffe2::serialize::PyTorchStreamReader good(at("good.pt"));
    auto [data, size] = good.getRecord("data.pkl");
    pickle.assign(static_cast<const char*>(data.get()), size);
  }
  {
    caffe2::serialize::PyTorchStreamWriter bad(at("bad.pt"));
    bad.writeRecord("data.pkl", pickle.data(), pickle.size());
    const float two[2] = {1, 1};
    bad.writeRecord("data/0", two, sizeof two);
  }
  try {
    read_torch_save(at("bad.pt"));
    FAIL() << "no error";
  } catch (const csan::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(at("bad.pt") + " (data.pkl)"), std::string::npos) << message;
    EXPECT_NE(message.find("storage 0 has room for"), std::string::npos) << message;
    EXPECT_NE(message.find("not 64 elements of Float"), std::string::npos) << message;
  }
}

}  // namespace
