// csan-preprocess end to end: a toy corpus in, a fairseq-style data directory out;
// every bad input gives one error line, a non-zero exit and no half-written destdir.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli_runner.h"
#include "toolkit/core/atomic_file.h"

namespace fs = std::filesystem;
using namespace csan::testing;

namespace {

// A small toy corpus written by csan-toy-corpus, shared by the tests of this binary.
const std::string& toy_dir() {
  static const std::string dir = [] {
    std::string d = make_temp_dir("preprocess_toy");
    auto r = run({tool("csan-toy-corpus"), "--out-dir", d, "--train", "1500", "--valid", "60", "--test", "60",
                  "--source-lang", "src", "--target-lang", "tgt"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return d;
  }();
  return dir;
}

RunResult preprocess(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {bin("csan-preprocess")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

std::vector<std::string> toy_args(const std::string& destdir) {
  return {"--source-lang",      "src",         "--target-lang",      "tgt",        "--trainpref",
          toy_dir() + "/train", "--validpref", toy_dir() + "/valid", "--testpref", toy_dir() + "/test",
          "--destdir",          destdir,       "--spm-vocab-size",   "200"};
}

std::map<std::string, std::string> contents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    files[entry.path().filename().string()] = csan::read_file(entry.path().string());
  return files;
}

// True if a line of `text` starts with the whitespace-separated `fields`.
bool has_row(const std::string& text, const std::vector<std::string>& fields) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> got;
    std::string word;
    while (got.size() < fields.size() && words >> word) got.push_back(word);
    if (got == fields) return true;
  }
  return false;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Expects exit 1 with exactly one line "csan-preprocess: error: ...<needle>..." and no destdir.
void expect_one_line_error(const RunResult& r, const std::string& needle, const std::string& destdir) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("csan-preprocess: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << r.err;
  if (!destdir.empty()) {
    EXPECT_FALSE(fs::exists(destdir)) << destdir;
    for (const auto& entry : fs::directory_iterator(fs::path(destdir).parent_path()))
      EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST(PreprocessCli, ToyCorpusEndToEnd) {
  std::string out = make_temp_dir("preprocess_ok") + "/data-bin";
  auto args = toy_args(out);
  args.insert(args.end(), {"--workers", "2"});
  auto r = preprocess(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no progress redraws when piped";
  EXPECT_TRUE(has_row(r.err, {"split", "lang", "lines", "tokens", "unk"})) << r.err;
  EXPECT_TRUE(has_row(r.err, {"train", "src", "1500"})) << r.err;
  EXPECT_TRUE(has_row(r.err, {"test", "tgt", "60"})) << r.err;
  EXPECT_NE(r.err.find("filtered from train: 0 of 1500"), std::string::npos) << r.err;
  auto files = contents(out);
  for (const char* name : {"spm.model", "dict.src.txt", "dict.tgt.txt", "preprocess.json"})
    EXPECT_EQ(files.count(name), 1u) << name;
  for (const char* split : {"train", "valid", "test"})
    for (const char* lang : {"src", "tgt"})
      for (const char* ext : {"bin", "idx"})
        EXPECT_EQ(files.count(std::string(split) + ".src-tgt." + lang + "." + ext), 1u) << split << lang << ext;
  EXPECT_EQ(files.size(), 16u);
  EXPECT_EQ(files["train.src-tgt.src.idx"].substr(0, 9), std::string("MMIDIDX\0\0", 9));
  EXPECT_EQ(files["train.src-tgt.src.idx"][17], 8) << "uint16 for a small vocabulary";

  // Deterministic: one worker, another directory, byte-identical files.
  std::string again = make_temp_dir("preprocess_again") + "/data-bin";
  ASSERT_EQ(preprocess(toy_args(again)).exit_code, 0);
  EXPECT_TRUE(contents(again) == files);
}

TEST(PreprocessCli, FiltersAreReported) {
  std::string out = make_temp_dir("preprocess_filter") + "/d";
  auto args = toy_args(out);
  args.insert(args.end(), {"--max-len", "10", "--min-len", "4"});
  auto r = preprocess(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("filtered from train: 0 of"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("too long"), std::string::npos) << r.err;
}

TEST(PreprocessCli, MissingFile) {
  std::string dir = make_temp_dir("preprocess_missing");
  auto r = preprocess({"-s", "src", "-t", "tgt", "--trainpref", dir + "/absent", "--destdir", dir + "/out"});
  expect_one_line_error(r, dir + "/absent.src: cannot open", dir + "/out");
}

TEST(PreprocessCli, LineCountMismatchNamesBothFilesAndCounts) {
  std::string dir = make_temp_dir("preprocess_counts");
  write(dir + "/train.src", "a b\nc d\ne f\n");
  write(dir + "/train.tgt", "x y\nz w\n");
  auto r = preprocess({"-s", "src", "-t", "tgt", "--trainpref", dir + "/train", "--destdir", dir + "/out"});
  expect_one_line_error(r, dir + "/train.src has 3 lines, " + dir + "/train.tgt has 2", dir + "/out");
}

TEST(PreprocessCli, InvalidUtf8NamesFileAndLine) {
  std::string dir = make_temp_dir("preprocess_utf8");
  write(dir + "/train.src", "a b\nc \xC3\x28 d\n");
  write(dir + "/train.tgt", "x y\nz w\n");
  auto r = preprocess({"-s", "src", "-t", "tgt", "--trainpref", dir + "/train", "--destdir", dir + "/out"});
  expect_one_line_error(r, dir + "/train.src:2: ", dir + "/out");
  EXPECT_NE(r.err.find("UTF-8"), std::string::npos) << r.err;
}

TEST(PreprocessCli, EmptyTrainingSetAfterFiltering) {
  std::string out = make_temp_dir("preprocess_empty") + "/out";
  auto args = toy_args(out);
  args.insert(args.end(), {"--max-len", "2"});
  auto r = preprocess(args);
  expect_one_line_error(r, "/train.tgt: no training pair is left after filtering (1500 lines read", out);
}

TEST(PreprocessCli, ExistingDestdirWithDifferentSettings) {
  std::string out = make_temp_dir("preprocess_settings") + "/out";
  ASSERT_EQ(preprocess(toy_args(out)).exit_code, 0);
  auto before = contents(out);
  auto args = toy_args(out);
  args.insert(args.end(), {"--joined-dictionary"});
  auto r = preprocess(args);
  expect_one_line_error(r, out + ": was built with different settings (joined_dictionary: false there, true now)", "");
  EXPECT_TRUE(contents(out) == before) << "the existing directory is untouched";
  // The same settings again: rebuilt and replaced, identical.
  ASSERT_EQ(preprocess(toy_args(out)).exit_code, 0);
  EXPECT_TRUE(contents(out) == before);
}

TEST(PreprocessCli, UnknownOption) {
  std::string dir = make_temp_dir("preprocess_option");
  auto r = preprocess({"--source-lang", "src", "--frobnicate", "3", "--destdir", dir + "/out"});
  expect_one_line_error(r, "frobnicate", dir + "/out");
}

TEST(PreprocessCli, OnlySourceMonolingual) {
  std::string out = make_temp_dir("preprocess_mono") + "/out";
  auto r = preprocess({"--only-source", "-s", "src", "--trainpref", toy_dir() + "/train", "--validpref",
                       toy_dir() + "/valid", "--destdir", out, "--spm-vocab-size", "100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto files = contents(out);
  EXPECT_EQ(files.size(), 7u);
  EXPECT_EQ(files.count("train.src.bin"), 1u);
  EXPECT_EQ(files.count("dict.tgt.txt"), 0u);
}

TEST(PreprocessCli, HelpListsTheOptions) {
  auto r = preprocess({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option : {"--trainpref", "--spm-model-type", "--joined-dictionary", "--max-len-ratio", "--workers"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

}  // namespace
