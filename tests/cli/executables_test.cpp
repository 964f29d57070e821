// Every program a user runs (the four executables, the tools and the benchmarks) answers
// --help with its usage on stdout and exit 0, and an unknown option with one error line
// naming the program and the option, and a non-zero exit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_runner.h"

namespace {

struct Program {
  std::string name, path;
};

std::vector<Program> programs() {
  std::vector<Program> all;
  for (const char* name : {"csan-preprocess", "csan-train", "csan-generate", "csan-score", "csan-export"})
    all.push_back({name, csan::testing::bin(name)});
  for (const char* name :
       {"csan-toy-corpus", "csan-toy-treebank", "average-checkpoints", "convert-checkpoint", "build-shortlist",
        "score-alignment"})
    all.push_back({name, csan::testing::tool(name)});
  for (const char* name :
       {"bench-crc32c", "bench-csan", "bench-decoding-attention", "bench-gemm", "bench-generate", "bench-preprocess",
        "bench-score", "bench-tagger", "bench-train"})
    all.push_back({name, csan::testing::tool(std::string("bench/") + name)});
  return all;
}

TEST(Executables, EveryProgramShowsItsHelpAndExitsZero) {
  for (const auto& p : programs()) {
    const auto r = csan::testing::run({p.path, "--help"});
    EXPECT_EQ(r.exit_code, 0) << p.name << ": " << r.err;
    EXPECT_NE(r.out.find(p.name), std::string::npos) << p.name << "'s usage does not name it:\n" << r.out;
    EXPECT_NE(r.out.find("--"), std::string::npos) << p.name << "'s usage lists no options:\n" << r.out;
  }
}

TEST(Executables, EveryProgramRejectsAnUnknownOptionInOneLine) {
  for (const auto& p : programs()) {
    const auto r = csan::testing::run({p.path, "--no-such-option"});
    EXPECT_NE(r.exit_code, 0) << p.name;
    // csan-score prints argparse's usage first, as sacreBLEU does; the error is its last line.
    std::string last = r.err;
    while (!last.empty() && last.back() == '\n') last.pop_back();
    last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
    EXPECT_EQ(last.rfind(p.name + ": error: ", 0), 0u) << p.name << ": " << r.err;
    EXPECT_NE(last.find("--no-such-option"), std::string::npos) << p.name << ": " << r.err;
    if (p.name != "csan-score") {
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << p.name << " wrote more than one line:\n" << r.err;
    }
  }
}

// The executables whose options depend on the task show every task's options.
TEST(Executables, HelpShowsEveryTasksOptions) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {"csan-preprocess", {"--task", "--trainpref", "--spm-model-type", "--vocab-protocol"}},
      {"csan-score", {"--task", "--tokenize", "--paired-bs", "--train", "--tag-column"}},
      {"csan-generate", {"--path", "--threads", "--beam", "--shortlist", "Tagging checkpoints", "--input"}}};
  for (const auto& [name, options] : expected) {
    const auto r = csan::testing::run({csan::testing::bin(name), "--help"});
    EXPECT_EQ(r.exit_code, 0) << name;
    for (const auto& option : options) EXPECT_NE(r.out.find(option), std::string::npos) << name << ": " << option;
  }
}

// csan-preprocess and csan-score start without LibTorch: neither links it (csan-train
// does, so the check can fail).
TEST(Executables, PreprocessAndScoreDoNotLinkLibTorch) {
  for (const char* name : {"csan-preprocess", "csan-score", "csan-train"}) {
    const auto r = csan::testing::run({"/usr/bin/ldd", csan::testing::bin(name)});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    const bool torch = r.out.find("libtorch") != std::string::npos || r.out.find("libc10") != std::string::npos;
    EXPECT_EQ(torch, std::string(name) == "csan-train") << name << ":\n" << r.out;
  }
}

}  // namespace
