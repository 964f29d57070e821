// core::json_text writes csan's JSON files in the layout they have always had, with every
// scalar written by nlohmann; the readers' errors name the file, the place and the field.
#include "toolkit/core/json_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/error_message.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

namespace {

using csan::core::json_text;
using Json = nlohmann::ordered_json;

TEST(JsonText, ScalarsOnlyContainersTakeOneLineWithPythonsSeparators) {
  const Json record = {{"kind", "train"}, {"update", 10}, {"loss", 0.1}, {"scale", 128.0}, {"ok", true}};
  EXPECT_EQ(json_text(record), R"({"kind": "train", "update": 10, "loss": 0.1, "scale": 128.0, "ok": true})");
  EXPECT_EQ(json_text(Json::array({1, "a", nullptr})), R"([1, "a", null])");
  EXPECT_EQ(json_text(Json::object()), "{}");
  EXPECT_EQ(json_text(Json::array()), "[]");
  EXPECT_EQ(json_text(Json({{"a", 1}, {"b", {2, 3}}}), /*items_on_lines=*/true), "{\n  \"a\": 1,\n  \"b\": [2, 3]\n}");
  EXPECT_EQ(json_text(Json({{"a", 1}}), /*items_on_lines=*/true), "{\n  \"a\": 1\n}");
  EXPECT_EQ(json_text(Json::object(), /*items_on_lines=*/true), "{}");
}

TEST(JsonText, OtherContainersTakeOneItemPerLine) {
  const Json settings = {{"format", 1}, {"trainpref", {"raw/train", "more/train"}}, {"validpref", Json::array()}};
  EXPECT_EQ(json_text(settings),
            "{\n"
            "  \"format\": 1,\n"
            "  \"trainpref\": [\"raw/train\", \"more/train\"],\n"
            "  \"validpref\": []\n"
            "}");
  Json system = {{"name", "sys"}, {"accuracy", {{"score", 93.5}, {"correct", 187}, {"total", 200}}}};
  system["tag_recall"] = {{"ADJ", {{"score", 50.0}}}, {"NOUN", {{"score", 100.0}}}};
  const Json report = {{"words", 200}, {"systems", {system}}};
  EXPECT_EQ(json_text(report),
            "{\n"
            "  \"words\": 200,\n"
            "  \"systems\": [\n"
            "    {\n"
            "      \"name\": \"sys\",\n"
            "      \"accuracy\": {\"score\": 93.5, \"correct\": 187, \"total\": 200},\n"
            "      \"tag_recall\": {\n"
            "        \"ADJ\": {\"score\": 50.0},\n"
            "        \"NOUN\": {\"score\": 100.0}\n"
            "      }\n"
            "    }\n"
            "  ]\n"
            "}");
}

TEST(JsonText, ScalarsAreNlohmanns) {
  // Escapes as JSON needs them, UTF-8 as it is, invalid bytes as U+FFFD rather than an
  // exception in the middle of a run.
  EXPECT_EQ(json_text(Json("a\"b\\c\n\x01 μ")), "\"a\\\"b\\\\c\\n\\u0001 μ\"");
  EXPECT_EQ(json_text(Json(std::string("bad\xff"))), "\"bad\xEF\xBF\xBD\"");
  EXPECT_EQ(json_text(Json({{"bad\xff", 1}})), "{\"bad\xEF\xBF\xBD\": 1}");
  // Shortest round-trip numbers; JSON has no NaN or infinity.
  EXPECT_EQ(json_text(Json(2.0 / 3)), "0.6666666666666666");
  EXPECT_EQ(std::stod(json_text(Json(2.0 / 3))), 2.0 / 3);
  EXPECT_EQ(json_text(Json(0.0005)), "0.0005");
  EXPECT_EQ(json_text(Json(std::nan(""))), "null");
  EXPECT_EQ(json_text(Json(-INFINITY)), "null");
  EXPECT_EQ(json_text(Json(-7)), "-7");
  EXPECT_EQ(json_text(Json(uint64_t{18446744073709551615ULL})), "18446744073709551615");
}

TEST(JsonText, TextReadsBackAsTheSameValue) {
  const Json value = {{"b", {{"c", {1, 2.5, "x"}}, {"d", Json::object()}}}, {"a", "z"}};
  EXPECT_EQ(csan::core::parse_json(json_text(value), "text"), value);
  EXPECT_EQ(csan::core::parse_json(json_text(value), "text").begin().key(), "b");  // order kept
}

TEST(ParseJson, MalformedJsonNamesTheOriginLineAndColumn) {
  EXPECT_EQ(csan::testing::message_of([] { csan::core::parse_json("{\n  \"a\": 1,\n  \"b\" 2\n}", "x.json"); }),
            "x.json: malformed JSON at line 3, column 7: syntax error while parsing object separator - unexpected "
            "number literal; expected ':'");
  EXPECT_EQ(csan::testing::message_of([] { csan::core::parse_json("", "empty.json"); }),
            "empty.json: malformed JSON at line 1, column 1: syntax error while parsing value - unexpected end of "
            "input; expected '[', '{', or a literal");
  EXPECT_EQ(csan::testing::message_of([] { csan::core::parse_json_line("{\"update\": 1", "m.jsonl", 7); }),
            "m.jsonl:7: malformed JSON at column 13: syntax error while parsing object - unexpected end of input; "
            "expected '}'");
  // A number too large for a double is nlohmann's out_of_range, not a parse_error: the same one line.
  EXPECT_EQ(csan::testing::message_of([] { csan::core::parse_json("{\"lr\": 1e999}", "r.json"); }),
            "r.json: malformed JSON: number overflow parsing '1e999'");
  EXPECT_EQ(csan::testing::message_of([] { csan::core::parse_json_line("[-9E99999]", "m.jsonl", 2); }),
            "m.jsonl:2: malformed JSON: number overflow parsing '-9E99999'");
}

TEST(ParseJson, MembersNameTheFieldAndWhatItHolds) {
  const Json record = csan::core::parse_json(
      R"({"task": "tagging", "chunk_length": "60", "word_chars": 64, "huge": 18446744073709551615})", "p.json");
  EXPECT_EQ(csan::core::json_string_member(record, "task", "p.json"), "tagging");
  EXPECT_EQ(csan::core::json_integer_member(record, "word_chars", "p.json"), 64);
  using csan::testing::message_of;
  EXPECT_EQ(message_of([&] { csan::core::json_integer_member(record, "chunk_length", "p.json"); }),
            "p.json: chunk_length is not an integer (got \"60\")");
  EXPECT_EQ(message_of([&] { csan::core::json_integer_member(record, "huge", "p.json"); }),
            "p.json: huge is not an integer (got 18446744073709551615)");
  EXPECT_EQ(message_of([&] { csan::core::json_string_member(record, "word_chars", "p.json"); }),
            "p.json: word_chars is not a string (got 64)");
  EXPECT_EQ(message_of([&] { csan::core::json_member(record, "tag_column", "p.json"); }), "p.json: no tag_column");
  EXPECT_EQ(message_of([&] {
              csan::core::json_member(Json::array({1, 2}), "task", "p.json");
            }),
            "p.json: not a JSON object (got [1,2])");
}

TEST(ParseJson, ReadsFiles) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("csan_json_text_" + std::to_string(::getpid()) + ".json")).string();
  csan::write_file_atomically(path, "{\"a\": [1, 2]}\n");
  EXPECT_EQ(csan::core::read_json_file(path), Json({{"a", {1, 2}}}));
  csan::write_file_atomically(path, "{\"a\": [1, 2}\n");
  EXPECT_EQ(csan::testing::message_of([&] {
              csan::core::read_json_file(path);
            }).find(path + ": malformed JSON at line 1, column 12"),
            0u);
  std::filesystem::remove(path);
  EXPECT_NE(csan::testing::message_of([&] { csan::core::read_json_file(path); }).find(path), std::string::npos);
}

}  // namespace
