// csan-preprocess --task tagging as a library call: the directory it writes (vocabulary
// files, binarized chunks of words, characters and labels, the settings record) reads
// back as written; reruns and bad input behave as for translation data.
#include "toolkit/data/tagging_preprocess.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/data/tagging_data.h"

namespace fs = std::filesystem;
using namespace csan::data;

namespace {

fs::path work_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("csan_tagging_preprocess_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::string word(int id, const std::string& form, const std::string& upos, const std::string& xpos = "_") {
  return std::to_string(id) + "\t" + form + "\t_\t" + upos + "\t" + xpos + "\t_\t0\t_\t_\t_\n";
}

// A sentence of `n` words w0 w1 ... tagged by parity.
std::string sentence(int n, const std::string& prefix = "w") {
  std::string out;
  for (int i = 1; i <= n; ++i)
    out += word(i, prefix + std::to_string(i % 7), i % 2 ? "ODD" : "EVEN", "X" + std::to_string(i % 3));
  return out + "\n";
}

std::string write(const std::string& name, const std::string& text) {
  const fs::path path = work_dir() / (name + ".conllu");
  std::ofstream(path) << text;
  return (work_dir() / name).string();
}

TaggingPreprocessOptions options(const std::string& dest) {
  TaggingPreprocessOptions o;
  o.trainpref = write("train", sentence(5) + sentence(130));
  o.validpref = write("dev", sentence(3, "v"));
  o.testpref = write("test", sentence(61));
  o.destdir = (work_dir() / dest).string();
  return o;
}

std::string error_of(const TaggingPreprocessOptions& o) {
  try {
    preprocess_tagging(o);
  } catch (const csan::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TaggingPreprocess, WritesVocabulariesChunksAndTheLayout) {
  auto o = options("convatt");
  o.protocol = VocabProtocol::kConvatt;
  o.chunk_length = 60;
  o.word_chars = 5;
  const auto summary = preprocess_tagging(o);
  const TaggingDataInfo info = read_tagging_data_info(o.destdir);
  EXPECT_EQ(info.protocol, VocabProtocol::kConvatt);
  EXPECT_EQ(info.column, TagColumn::kUpos);
  EXPECT_EQ(info.layout.chunk_length, 60);
  EXPECT_EQ(info.layout.word_chars, 5);
  EXPECT_EQ(info.layout.pad_word_spelling, "<PAD>");

  // 135 training words in sentences of 5 and 130: chunks of 5, 60, 60, 10.
  TaggingSplit train(o.destdir, "train", info.layout);
  ASSERT_EQ(train.size(), 4u);
  EXPECT_EQ(train.lengths(), (std::vector<int32_t>{5, 60, 60, 10}));
  EXPECT_EQ(train.word_count(), 135);
  EXPECT_EQ(train.chars(1).size(), 60u * 5);
  EXPECT_EQ(TaggingSplit(o.destdir, "test", info.layout).lengths(), (std::vector<int32_t>{60, 1}));
  ASSERT_EQ(summary.splits.size(), 3u);
  EXPECT_EQ(summary.splits[0].chunks, 4);
  EXPECT_EQ(summary.splits[2].words, 61);

  // The ids are the protocol's: the binarized chunks equal encode_sentence's.
  const auto words = TaggingVocabulary::load(tagging_vocabulary_path(o.destdir, "words"));
  const auto chars = TaggingVocabulary::load(tagging_vocabulary_path(o.destdir, "chars"));
  const auto labels = TaggingVocabulary::load(tagging_vocabulary_path(o.destdir, "labels"));
  EXPECT_EQ(summary.words, words.size());
  // 7 + 7 + 7 word types ("w0".."w6", "v0".."v6" partly): half of the types are words.
  EXPECT_EQ(labels.symbol(2), "ODD");
  const auto expected = encode_sentence(tagged_sentences(read_conllu(o.trainpref + ".conllu"), TagColumn::kUpos)[1],
                                        {words, chars, labels}, info.layout);
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(train.words(2), std::vector<int64_t>(expected[1].words.begin(), expected[1].words.end()));
  EXPECT_EQ(train.chars(2), std::vector<int64_t>(expected[1].chars.begin(), expected[1].chars.end()));
  EXPECT_EQ(train.labels(3), std::vector<int64_t>(expected[2].labels.begin(), expected[2].labels.end()));
}

TEST(TaggingPreprocess, XposAndStandardProtocol) {
  auto o = options("xpos");
  o.column = TagColumn::kXpos;
  preprocess_tagging(o);
  const auto info = read_tagging_data_info(o.destdir);
  EXPECT_EQ(info.column, TagColumn::kXpos);
  EXPECT_EQ(info.protocol, VocabProtocol::kStandard);
  EXPECT_EQ(info.layout.pad_word_spelling, "");
  const auto labels = TaggingVocabulary::load(tagging_vocabulary_path(o.destdir, "labels"));
  EXPECT_EQ(labels.size(), 2 + 3);  // X0 X1 X2
  EXPECT_TRUE(tagging_split_exists(o.destdir, "valid"));
  EXPECT_FALSE(tagging_split_exists(o.destdir, "valid1"));
}

TEST(TaggingPreprocess, RerunsRebuildAndOtherSettingsAreRefused) {
  auto o = options("rerun");
  preprocess_tagging(o);
  const std::string first = csan::read_file(tagging_vocabulary_path(o.destdir, "words"));
  preprocess_tagging(o);
  EXPECT_EQ(csan::read_file(tagging_vocabulary_path(o.destdir, "words")), first);
  o.chunk_length = 30;
  EXPECT_NE(error_of(o).find("was built with different settings (chunk_length: 60 there, 30 now)"), std::string::npos)
      << error_of(o);
  // Translation data is not tagging data.
  const fs::path translation = work_dir() / "translation";
  fs::create_directories(translation);
  std::ofstream(translation / "preprocess.json") << "{\n  \"format\": 1\n}\n";
  try {
    read_tagging_data_info(translation.string());
    FAIL();
  } catch (const csan::Error& e) {
    EXPECT_NE(std::string(e.what()).find("preprocess.json: no task"), std::string::npos) << e.what();
  }
}

// preprocess.json as written (the layout of every csan record), and a damaged one read
// back: each problem is one error naming the file and the place or the field.
TEST(TaggingPreprocess, SettingsRecordAndItsDamage) {
  auto o = options("record");
  o.protocol = VocabProtocol::kConvatt;
  preprocess_tagging(o);
  const std::string path = o.destdir + "/preprocess.json";
  const std::string record = csan::read_file(path);
  EXPECT_EQ(record, "{\n  \"format\": 1,\n  \"task\": \"tagging\",\n  \"trainpref\": \"" + o.trainpref +
                        "\",\n  \"validpref\": \"" + o.validpref + "\",\n  \"testpref\": \"" + o.testpref +
                        "\",\n  \"word_threshold\": 2,\n  \"char_threshold\": 1,\n  \"tag_column\": \"upos\",\n"
                        "  \"vocab_protocol\": \"convatt\",\n  \"chunk_length\": 60,\n  \"word_chars\": 20,\n"
                        "  \"pad_word_spelling\": \"<PAD>\"\n}\n");
  auto damaged = [&](const std::string& from, const std::string& to) {
    std::string text = record;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    csan::write_file_atomically(path, text.replace(at, from.size(), to));
    try {
      read_tagging_data_info(o.destdir);
    } catch (const csan::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(damaged("\"<PAD>\"\n}", "\"<PAD>\"\n"),
            path +
                ": malformed JSON at line 15, column 1: syntax error while parsing object - unexpected end of "
                "input; expected '}'");
  EXPECT_EQ(damaged("\"chunk_length\": 60", "\"chunk_length\": \"60\""),
            path + ": chunk_length is not an integer (got \"60\")");
  EXPECT_EQ(damaged("\"chunk_length\": 60", "\"chunk_length\": 0"),
            path + ": chunk_length is not a positive integer (0)");
  EXPECT_EQ(damaged("\"tag_column\": \"upos\"", "\"tag_column\": 3"), path + ": tag_column is not a string (got 3)");
  EXPECT_EQ(damaged("  \"word_chars\": 20,\n", ""), path + ": no word_chars");
  EXPECT_EQ(damaged("\"task\": \"tagging\"", "\"task\": \"translation\""),
            path + ": not tagging data (written by csan-preprocess without --task tagging)");
  EXPECT_EQ(damaged("{", "["), path +
                                   ": malformed JSON at line 2, column 11: syntax error while parsing array - "
                                   "unexpected ':'; expected ']'");
}

TEST(TaggingPreprocess, BadInputAndOptionsAreErrorsThatLeaveNothingBehind) {
  auto o = options("bad");
  o.trainpref = write("malformed", word(1, "a", "X") + "2\tb\tX\n");
  EXPECT_EQ(error_of(o),
            (work_dir() / "malformed.conllu").string() + ":2: 3 tab-separated columns; a CoNLL-U word line has 10");
  EXPECT_FALSE(fs::exists(o.destdir));
  o = options("bad");
  o.validpref = (work_dir() / "missing").string();
  EXPECT_NE(error_of(o).find("missing.conllu"), std::string::npos) << error_of(o);
  EXPECT_FALSE(fs::exists(o.destdir));
  o = options("bad");
  o.protocol = VocabProtocol::kConvatt;
  o.testpref.clear();
  EXPECT_NE(error_of(o).find("--validpref and --testpref are required"), std::string::npos) << error_of(o);
  o = options("bad");
  o.trainpref.clear();
  EXPECT_EQ(error_of(o), "key 'trainpref': is required (PREFIX.conllu is read)");
  o = options("bad");
  o.chunk_length = 0;
  EXPECT_EQ(error_of(o), "key 'chunk-length': must be at least 1");
  EXPECT_FALSE(fs::exists(o.destdir));
}

}  // namespace
