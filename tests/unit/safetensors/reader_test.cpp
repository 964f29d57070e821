// The reader against crafted files: each malformed header or layout is one line naming the
// file and the tensor or field; what safetensors itself accepts is read.
#include "toolkit/safetensors/reader.h"

#include <gtest/gtest.h>

#include "tests/support/error_message.h"
#include "tests/unit/safetensors/safetensors_files.h"

namespace {

using namespace csan::safetensors;
using csan::testing::message_of;
using csan::testing::safetensors_bytes;
using csan::testing::write_bytes;

struct Refusal {
  std::string what;     // the case
  std::string file;     // its bytes
  std::string message;  // after "PATH: "
};

// One tensor entry's JSON.
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
}

std::string header(const std::string& entries) { return "{" + entries + "}"; }

std::string u64(uint64_t value) {
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &value, 8);
  return bytes;
}

TEST(SafetensorsReader, EachMalformedFileIsOneLineNamingTheFileAndTheTensorOrField) {
  const std::string data12(12, '\x01');
  const std::vector<Refusal> refusals{
      {"empty file", "", "not a safetensors file (0 bytes, shorter than the 8-byte header length)"},
      {"short file", "abcde", "not a safetensors file (5 bytes, shorter than the 8-byte header length)"},
      {"header length 1", u64(1) + "{", "header length 1 is too small for a JSON object"},
      {"header length 0", u64(0), "header length 0 is too small for a JSON object"},
      {"header length over the limit", u64(100'000'001) + "{}",
       "header length 100000001 exceeds safetensors' limit of 100000000 bytes (not a safetensors file?)"},
      {"header length of a text file", "# a text file, not tensors\n",
       "header length 8392569455038767139 exceeds safetensors' limit of 100000000 bytes (not a safetensors file?)"},
      {"header past the end", u64(100) + "{}",
       "header length 100 runs past the end of the file (10 bytes; truncated?)"},
      {"truncated data", safetensors_bytes(header(entry("w", "F32", "[3]", "[0,12]")), "\x01\x02"),
       "tensor 'w': data_offsets [0, 12] run past the end of the data (2 bytes)"},
      {"not an object", safetensors_bytes("[1, 2]"), "header is array, not a JSON object"},
      {"a string", safetensors_bytes("\"{}\""), "header is string, not a JSON object"},
      {"duplicate tensor",
       safetensors_bytes(header(entry("w", "U8", "[1]", "[0,1]") + "," + entry("w", "U8", "[1]", "[1,2]")), "ab"),
       "tensor 'w' appears twice"},
      {"duplicate metadata map", safetensors_bytes(R"({"__metadata__":{},"__metadata__":{}})"),
       "__metadata__ appears twice"},
      {"duplicate metadata key", safetensors_bytes(R"({"__metadata__":{"k":"a","k":"b"}})"),
       "__metadata__ key 'k' appears twice"},
      {"duplicate field",
       safetensors_bytes(R"({"w":{"dtype":"U8","dtype":"I8","shape":[],"data_offsets":[0,1]}})", "a"),
       "tensor 'w': field 'dtype' appears twice"},
      {"object nested in an entry", safetensors_bytes(R"({"w":{"dtype":{"a":1}}})"),
       "header nests deeper than a safetensors header (inside 'dtype')"},
      {"array nested in a shape", safetensors_bytes(R"({"w":{"shape":[[1]]}})"),
       "header nests deeper than a safetensors header (inside 'shape')"},
      {"entry not an object", safetensors_bytes(R"({"w":3})"),
       "tensor 'w': entry is number, not {dtype, shape, data_offsets}"},
      {"no dtype", safetensors_bytes(R"({"w":{"shape":[1],"data_offsets":[0,1]}})", "a"), "tensor 'w': no dtype"},
      {"dtype a number", safetensors_bytes(R"({"w":{"dtype":8,"shape":[1],"data_offsets":[0,1]}})", "a"),
       "tensor 'w': dtype is number, not a string"},
      {"unknown dtype", safetensors_bytes(header(entry("w", "F4", "[2]", "[0,1]")), "a"),
       "tensor 'w': dtype 'F4' is not one csan reads (BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, "
       "F32, I64, U64, F64)"},
      {"lowercase dtype", safetensors_bytes(header(entry("w", "f32", "[1]", "[0,4]")), "abcd"),
       "tensor 'w': dtype 'f32' is not one csan reads (BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, "
       "F32, I64, U64, F64)"},
      {"no shape", safetensors_bytes(R"({"w":{"dtype":"U8","data_offsets":[0,1]}})", "a"), "tensor 'w': no shape"},
      {"negative dimension", safetensors_bytes(header(entry("w", "U8", "[2,-1]", "[0,1]")), "a"),
       "tensor 'w': shape must be a list of non-negative integers"},
      {"fractional dimension", safetensors_bytes(header(entry("w", "U8", "[1.5]", "[0,1]")), "a"),
       "tensor 'w': shape must be a list of non-negative integers"},
      {"shape not a list", safetensors_bytes(header(entry("w", "U8", "1", "[0,1]")), "a"),
       "tensor 'w': shape must be a list of non-negative integers"},
      {"element count overflows",
       safetensors_bytes(header(entry("w", "F32", "[4294967296,4294967296]", "[0,4]")), "abcd"),
       "tensor 'w': shape [4294967296,4294967296] is too large (a dimension or the byte count passes 64 bits)"},
      {"byte count overflows", safetensors_bytes(header(entry("w", "F64", "[2305843009213693952]", "[0,4]")), "abcd"),
       "tensor 'w': shape [2305843009213693952] is too large (a dimension or the byte count passes 64 bits)"},
      {"dimension past int64", safetensors_bytes(header(entry("w", "U8", "[9223372036854775808,0]", "[0,0]"))),
       "tensor 'w': shape [9223372036854775808,0] is too large (a dimension or the byte count passes 64 bits)"},
      {"dimension past uint64", safetensors_bytes(header(entry("w", "U8", "[18446744073709551616]", "[0,1]")), "a"),
       "tensor 'w': shape must be a list of non-negative integers"},
      {"no data_offsets", safetensors_bytes(R"({"w":{"dtype":"U8","shape":[1]}})", "a"), "tensor 'w': no data_offsets"},
      {"one offset", safetensors_bytes(header(entry("w", "U8", "[1]", "[1]")), "a"),
       "tensor 'w': data_offsets must be two non-negative integers [BEGIN, END]"},
      {"three offsets", safetensors_bytes(header(entry("w", "U8", "[1]", "[0,1,2]")), "a"),
       "tensor 'w': data_offsets must be two non-negative integers [BEGIN, END]"},
      {"negative offset", safetensors_bytes(header(entry("w", "U8", "[1]", "[-1,0]")), "a"),
       "tensor 'w': data_offsets must be two non-negative integers [BEGIN, END]"},
      {"offsets out of order",
       safetensors_bytes(header(entry("encoder.layers.0.fc1.weight", "F32", "[1]", "[12,8]")), data12),
       "tensor 'encoder.layers.0.fc1.weight': data_offsets [12, 8] out of order"},
      {"offsets past the data", safetensors_bytes(header(entry("w", "F32", "[4]", "[0,16]")), data12),
       "tensor 'w': data_offsets [0, 16] run past the end of the data (12 bytes)"},
      {"huge offsets",
       safetensors_bytes(header(entry("w", "U8", "[1]", "[18446744073709551614,18446744073709551615]")), "a"),
       "tensor 'w': data_offsets [18446744073709551614, 18446744073709551615] run past the end of the data (1 bytes)"},
      {"bytes and shape disagree", safetensors_bytes(header(entry("w", "F32", "[3]", "[0,8]")), data12),
       "tensor 'w': data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12"},
      {"overlapping tensors",
       safetensors_bytes(header(entry("a", "F32", "[2]", "[0,8]") + "," + entry("b", "F32", "[2]", "[4,12]")), data12),
       "tensor 'b': data_offsets [4, 12] overlap those of tensor 'a' [0, 8]"},
      {"empty tensor inside another",
       safetensors_bytes(header(entry("a", "F32", "[3]", "[0,12]") + "," + entry("e", "F32", "[0]", "[4,4]")), data12),
       "tensor 'e': data_offsets [4, 4] overlap those of tensor 'a' [0, 12]"},
      {"hole between tensors",
       safetensors_bytes(header(entry("a", "F32", "[1]", "[0,4]") + "," + entry("b", "F32", "[1]", "[8,12]")), data12),
       "bytes [4, 8) of the data belong to no tensor (a hole before tensor 'b')"},
      {"hole at the start", safetensors_bytes(header(entry("a", "F32", "[2]", "[4,12]")), data12),
       "bytes [0, 4) of the data belong to no tensor (a hole before tensor 'a')"},
      {"bytes after the last tensor", safetensors_bytes(header(entry("a", "F32", "[2]", "[0,8]")), data12),
       "bytes [8, 12) of the data belong to no tensor (after tensor 'a')"},
      {"data but no tensors", safetensors_bytes("{}", data12),
       "bytes [0, 12) of the data belong to no tensor (no tensors)"},
      {"metadata not a map", safetensors_bytes(R"({"__metadata__":["a"]})"),
       "__metadata__ is array, not a map of strings"},
      {"metadata value not a string", safetensors_bytes(R"({"__metadata__":{"epoch":3}})"),
       "__metadata__ 'epoch' is number, not a string"},
      {"metadata value null", safetensors_bytes(R"({"__metadata__":{"epoch":null}})"),
       "__metadata__ 'epoch' is null, not a string"},
      {"a name with a line break", safetensors_bytes(R"({"a\nb":1})"),
       "tensor 'a\\x0ab': entry is number, not {dtype, shape, data_offsets}"},
  };
  for (size_t i = 0; i < refusals.size(); ++i) {
    const auto path = write_bytes("refused-" + std::to_string(i) + ".safetensors", refusals[i].file);
    EXPECT_EQ(message_of([&] { Reader reader(path); }), path + ": " + refusals[i].message) << refusals[i].what;
  }
}

TEST(SafetensorsReader, TextThatIsNotJsonOrNotUtf8IsOneLineSayingSo) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"syntax", "{\"w\":}"},
      {"truncated", "{\"w\":{\"dtype\""},
      {"invalid UTF-8 in a name", "{\"w\xFF\":1}"},
      {"invalid UTF-8 in metadata", "{\"__metadata__\":{\"k\":\"\xC3\x28\"}}"},
      {"lone surrogate escape", "{\"__metadata__\":{\"k\":\"\\ud800\"}}"},
      {"NUL byte", std::string("{\"w\"\0:1}", 8)},
      {"raw line break in a string", "{\"a\nb\":1}"},
      {"trailing garbage", "{} x"},
      {"two objects", "{}{}"},
      // A number nlohmann::json refuses as out of range, not as a syntax error (found by
      // fuzzing: tests/fuzz/corpus/safetensors/crash-number-overflow).
      {"number overflow", "{\"w\":6E6148914691236517205}"},
      {"float overflow", "{\"w\":1e999}"},
  };
  for (const auto& [what, text] : cases) {
    const auto path = write_bytes("not-json.safetensors", safetensors_bytes(text));
    const std::string message = message_of([&] { Reader reader(path); });
    EXPECT_EQ(message.rfind(path + ": header is not valid JSON: ", 0), 0u) << what << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << what << ": " << message;
  }
}

TEST(SafetensorsReader, ReadsWhatSafetensorsAccepts) {
  // Tensors listed in any order, unknown fields, whitespace around the header, empty and
  // scalar tensors sharing offsets, metadata absent.
  const std::string text =
      "  \n{\"b\":{\"data_offsets\":[4,12],\"shape\":[2],\"dtype\":\"I32\",\"extra\":\"ignored\"}, "
      "\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
      "\"e1\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[4,4]},"
      "\"e2\":{\"dtype\":\"F64\",\"shape\":[5,0],\"data_offsets\":[12,12]},"
      "\"s\":{\"dtype\":\"I8\",\"shape\":[],\"data_offsets\":[12,13]}}  \t\r\n";
  const std::string data = "abcd" + std::string("\x01\x00\x00\x00\x02\x00\x00\x00", 8) + "z";
  const auto path = write_bytes("other-writer.safetensors", safetensors_bytes(text, data));
  const Reader reader(path);
  std::vector<std::string> order;
  for (const auto& t : reader.tensors()) order.push_back(t.name);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "e1", "b", "e2", "s"}));
  EXPECT_EQ(std::string(reader.tensor("a").data, 4), "abcd");
  EXPECT_EQ(reader.tensor("b").shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(std::string(reader.tensor("b").data, 8), data.substr(4, 8));
  EXPECT_EQ(reader.tensor("e2").shape, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(reader.tensor("e2").elements(), 0);
  EXPECT_EQ(reader.tensor("s").shape, std::vector<int64_t>{});
  EXPECT_EQ(reader.tensor("s").elements(), 1);
  EXPECT_EQ(*reader.tensor("s").data, 'z');
  EXPECT_TRUE(reader.metadata().empty());
  EXPECT_FALSE(reader.checksummed());
}

TEST(SafetensorsReader, AnEmptyHeaderObjectIsAnEmptyFile) {
  const auto path = write_bytes("empty-object.safetensors", safetensors_bytes("{}"));
  EXPECT_TRUE(Reader(path).tensors().empty());
}

TEST(SafetensorsReader, AMissingTensorOrFileIsNamed) {
  const auto path = write_bytes("one.safetensors",
                                safetensors_bytes(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "a"));
  const Reader reader(path);
  EXPECT_EQ(message_of([&] { reader.tensor("decoder.weight"); }), path + ": no tensor 'decoder.weight'");
  EXPECT_EQ(message_of([&] { Reader missing(path + ".missing"); }),
            path + ".missing: cannot open: No such file or directory");
}

}  // namespace
