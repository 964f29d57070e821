// The bounded pickle reader (toolkit/foreign/pickle_reader.h): what torch.save and fairseq
// write reads back, and each malformed or unsupported input is an error naming the origin
// and what is wrong, never a crash.
#include "toolkit/foreign/pickle_reader.h"

#include <gtest/gtest.h>

#include "toolkit/core/error.h"

namespace {

using csan::foreign::PickleValue;
using Kind = PickleValue::Kind;

// Two float32 storages: "0" holds 2 values (1.5, -2), "1" none.
torch::Tensor storage(const std::string& key) {
  if (key == "1") return torch::empty({0}, torch::kUInt8);
  return torch::tensor({1.5f, -2.0f}).view(torch::kUInt8).clone();
}

csan::foreign::PicklePtr read(const std::string& bytes) { return csan::foreign::read_pickle(bytes, "t.pkl", storage); }

std::string error_of(const std::string& bytes) {
  try {
    read(bytes);
  } catch (const csan::Error& e) {
    return e.what();
  }
  return "no error";
}

// A BINUNICODE string.
std::string str(const std::string& s) {
  std::string out = "X";
  for (int i = 0; i < 4; ++i) out += static_cast<char>((s.size() >> (8 * i)) & 0xff);
  return out + s;
}

// _rebuild_tensor_v2(storage "0" of `numel` floats, offset, (size,), (1,))
std::string tensor(int numel, int offset, int size) {
  return std::string("ctorch._utils\n_rebuild_tensor_v2\n(") + "(" + str("storage") + "ctorch\nFloatStorage\n" +
         str("0") + str("cpu") + "K" + static_cast<char>(numel) + "tQ" + "K" + static_cast<char>(offset) + "K" +
         static_cast<char>(size) + "\x85" + "K\x01\x85" + "\x89" + ")" + "tR";
}

TEST(PickleReader, ReadsDictsNamespacesAndTensors) {
  const std::string bytes = std::string("\x80\x02}(") + str("n") + "K\x07" + str("f") + "G\x3f\xf8" +
                            std::string(6, '\0') + str("ns") + "cargparse\nNamespace\nq\x01)\x81}(" + str("arch") +
                            str("transformer") + "ub" + str("w") + tensor(2, 1, 1) + str("big") + "\x8a\x02\xff\x7f" +
                            str("neg") + "J\xfe\xff\xff\xff" + "u.";
  const auto root = read(bytes);
  ASSERT_EQ(root->kind, Kind::dict);
  EXPECT_EQ(root->find("n")->integer, 7);
  EXPECT_DOUBLE_EQ(root->find("f")->floating, 1.5);
  EXPECT_EQ(root->find("ns")->kind, Kind::object);
  EXPECT_EQ(root->find("ns")->text, "argparse Namespace");
  EXPECT_EQ(root->find("ns")->find("arch")->text, "transformer");
  EXPECT_EQ(root->find("big")->integer, 0x7fff);
  EXPECT_EQ(root->find("neg")->integer, -2);
  const torch::Tensor w = root->find("w")->tensor;
  ASSERT_EQ(w.numel(), 1);
  EXPECT_FLOAT_EQ(w.item<float>(), -2.0f);
}

TEST(PickleReader, OtherClassesAreOpaqueNotRun) {
  const auto root = read(std::string("\x80\x02") + "cos\nsystem\n(" + str("true") + "tR.");
  EXPECT_EQ(root->kind, Kind::object);
  EXPECT_EQ(root->text, "os system");
  EXPECT_EQ(root->describe(), "a os system object");
}

TEST(PickleReader, MalformedInputsAreErrorsNamingOriginAndOffset) {
  EXPECT_EQ(error_of("\x80\x02i."), "t.pkl: pickle offset 2: unsupported pickle opcode 0x69");
  EXPECT_EQ(error_of(std::string("\x80\x02X\x10\x00\x00\x00"
                                 "ab",
                                 9)),
            "t.pkl: pickle offset 2: length 16 past the end of the data");
  EXPECT_EQ(error_of(std::string("\x80\x02X\x05\x00\x00\x00"
                                 "ab",
                                 9)),
            "t.pkl: pickle offset 2: truncated (needs 5 more bytes)");
  EXPECT_EQ(error_of("\x80\x02h\x05."), "t.pkl: pickle offset 2: memo index 5 was never stored");
  EXPECT_EQ(error_of("\x80\x02K\x01K\x02."), "t.pkl: pickle offset 6: STOP with 2 values on the stack");
  EXPECT_EQ(error_of("\x80\x02"
                     "a."),
            "t.pkl: pickle offset 2: stack underflow");
  EXPECT_EQ(error_of(std::string("\x80\x02]q\x00h\x00"
                                 "a.",
                                 8)),
            "t.pkl: pickle offset 7: a container inside itself (recursive data is not supported)");
  EXPECT_EQ(error_of("\x80\x02K\x01"), "t.pkl: pickle offset 4: truncated (needs 1 more bytes)");
  EXPECT_EQ(error_of("\x80\x02" + tensor(2, 0, 5) + "."),
            "t.pkl: pickle offset 98: tensor past the end of its storage (2 elements)");
  EXPECT_EQ(error_of("\x80\x02" + tensor(9, 0, 1) + "."),
            "t.pkl: pickle offset 86: storage 0 has room for 8 bytes, not 9 elements of Float");
}

TEST(PickleReader, NestingIsBounded) {
  std::string deep = "\x80\x02";
  for (int i = 0; i < 200; ++i) deep += "]";
  for (int i = 0; i < 199; ++i) deep += "a";
  EXPECT_NE(error_of(deep + ".").find("data nested deeper than 100 levels"), std::string::npos);
}

}  // namespace
