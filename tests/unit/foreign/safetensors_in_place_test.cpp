// Importers use a safetensors file's weights where they lie (marian_import.cpp): mapped
// copy-on-write, a tensor from checkpoint::in_place may be changed in place, and the change
// stays in this process: the file and a second reader still see the original bytes.
#include <gtest/gtest.h>

#include "toolkit/checkpoint/stored_tensor.h"
#include "toolkit/safetensors/reader.h"
#include "tests/unit/safetensors/safetensors_files.h"

namespace {

using namespace csan;

TEST(SafetensorsInPlace, CopyOnWriteTensorsChangeOnlyHere) {
  const float values[4] = {1, 2, 3, 4};
  // 8 + 64 header bytes: the data starts 8-byte aligned, as in_place needs for F32.
  std::string header = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  header.append(64 - header.size(), ' ');
  const std::string bytes =
      csan::testing::safetensors_bytes(header, std::string(reinterpret_cast<const char*>(values), sizeof values));
  const std::string path = csan::testing::write_bytes("in-place.safetensors", bytes);

  torch::Tensor w;
  {
    const safetensors::Reader reader(path, safetensors::ChecksumPolicy::kVerifyIfPresent,
                                     core::MappedFile::Access::copy_on_write);
    const safetensors::TensorView& view = reader.tensor("w");
    ASSERT_TRUE(view.aligned());
    w = checkpoint::in_place(view, reader.mapping(), path);
  }  // the tensor keeps the mapping
  EXPECT_TRUE(torch::equal(w, torch::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({2, 2})));
  w.mul_(10);  // a read-only mapping would fault here
  EXPECT_TRUE(torch::equal(w, torch::tensor({10.0f, 20.0f, 30.0f, 40.0f}).view({2, 2})));
  EXPECT_EQ(csan::testing::read_bytes(path), bytes);
  const safetensors::Reader again(path);
  EXPECT_TRUE(torch::equal(checkpoint::copy_of(again.tensor("w"), path),
                           torch::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({2, 2})));
}

}  // namespace
