// csan-toy-corpus end to end: it writes the six split files, reproducibly, and rejects
// bad options with one line on stderr and a non-zero exit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "tests/support/text_files.h"

namespace fs = std::filesystem;
using csan::testing::run;
using csan::testing::slurp;
using csan::testing::tool;

namespace {

size_t lines_in(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

bool is_one_line(const std::string& text) { return !text.empty() && lines_in(text) == 1 && text.back() == '\n'; }

csan::testing::RunResult toy_corpus(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {tool("csan-toy-corpus")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

TEST(ToyCorpusCli, WritesSplitsReproducibly) {
  const fs::path dir = csan::testing::make_temp_dir("toy_corpus_good");
  const std::vector<std::string> options = {"--train", "1000", "--valid", "50", "--test", "80", "--seed", "9"};
  auto with_dir = [&](const fs::path& out) {
    std::vector<std::string> args = {"--out-dir", out.string()};
    args.insert(args.end(), options.begin(), options.end());
    return args;
  };
  auto first = toy_corpus(with_dir(dir / "a"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(is_one_line(first.err)) << first.err;
  EXPECT_NE(first.err.find("train 1000, valid 50, test 80"), std::string::npos) << first.err;
  EXPECT_TRUE(first.out.empty());

  const std::vector<std::pair<std::string, size_t>> splits = {{"train", 1000}, {"valid", 50}, {"test", 80}};
  for (const auto& [split, count] : splits)
    for (const char* lang : {"src", "tgt"}) {
      const std::string text = slurp(dir / "a" / (split + "." + lang));
      EXPECT_EQ(lines_in(text), count) << split << "." << lang;
      EXPECT_EQ(text.find("\n\n"), std::string::npos);
      EXPECT_EQ(text.find('\r'), std::string::npos);
    }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "a"), fs::directory_iterator{}), 6);

  auto second = toy_corpus(with_dir(dir / "b"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  for (const auto& [split, count] : splits)
    for (const char* lang : {"src", "tgt"}) {
      const std::string name = split + "." + lang;
      EXPECT_EQ(slurp(dir / "a" / name), slurp(dir / "b" / name)) << name << " differs between identical runs";
    }

  std::vector<std::string> other_seed = with_dir(dir / "c");
  other_seed.back() = "10";
  ASSERT_EQ(toy_corpus(other_seed).exit_code, 0);
  EXPECT_NE(slurp(dir / "a" / "train.src"), slurp(dir / "c" / "train.src"));
  fs::remove_all(dir);
}

TEST(ToyCorpusCli, LanguageNamesBecomeFileSuffixes) {
  const fs::path dir = csan::testing::make_temp_dir("toy_corpus_langs");
  auto r = toy_corpus({"--out-dir", dir.string(), "--train", "20", "--valid", "0", "--test", "5", "--source-lang", "xx",
                       "--target-lang", "yy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_in(slurp(dir / "train.xx")), 20u);
  EXPECT_EQ(lines_in(slurp(dir / "test.yy")), 5u);
  EXPECT_EQ(slurp(dir / "valid.xx"), "");
  fs::remove_all(dir);
}

TEST(ToyCorpusCli, BadOptionsGiveOneLineErrors) {
  const fs::path dir = csan::testing::make_temp_dir("toy_corpus_bad");
  const std::string out = (dir / "out").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--out-dir", out, "--bogus"}, "bogus"},
      {{"--train", "10"}, "out-dir"},
      {{"--out-dir", out, "--train", "-5"}, "--train"},
      {{"--out-dir", out, "--train", "ten"}, "train"},
      {{"--out-dir", out, "--max-words", "2"}, "--max-words"},
      {{"--out-dir", out, "--source-lang", "a/b"}, "--source-lang"},
      {{"--out-dir", out, "--target-lang", "src"}, "--target-lang"},
      {{"--out-dir", out, "--train", "5000", "--max-words", "3"}, "distinct sentences"},
  };
  for (const auto& [args, mention] : cases) {
    auto r = toy_corpus(args);
    EXPECT_EQ(r.exit_code, 1) << args.back();
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_EQ(r.err.rfind("csan-toy-corpus: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(mention), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(out)) << "a failed run must not leave output behind";

  // An output path that is a file, not a directory.
  std::ofstream(dir / "file") << "x";
  auto r = toy_corpus({"--out-dir", (dir / "file").string(), "--train", "10"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(is_one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find((dir / "file").string()), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(ToyCorpusCli, HelpListsTheOptions) {
  auto r = toy_corpus({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option :
       {"--out-dir", "--train", "--valid", "--test", "--seed", "--source-lang", "--target-lang", "--max-words"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

}  // namespace
