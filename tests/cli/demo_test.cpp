// tools/demo.sh, the README's first command, end to end: toy corpus, preprocess, training,
// translation of the test set and its BLEU, with the executables of this build
// (CSAN_DEMO_SKIP_SETUP: no install, no build from inside ctest) and one epoch instead of
// ten, so it checks that the pipeline's commands and options still fit together, not how
// well one epoch translates.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "cli_runner.h"
#include "tests/support/text_files.h"

namespace fs = std::filesystem;
using csan::testing::run;
using csan::testing::slurp;
using csan::testing::split;

TEST(Demo, RunsThePipelineOnTheToyCorpusAndPrintsItsBleu) {
  const std::string out = csan::testing::make_temp_dir("demo") + "/output";
  const std::string build = fs::path(CSAN_TOOLS_DIR).parent_path().string();
  const auto r = run({"/bin/bash", std::string(CSAN_SOURCE_DIR) + "/tools/demo.sh"}, "",
                     {"CSAN_DEMO_SKIP_SETUP=1", "CSAN_DEMO_EPOCHS=1", "CSAN_BUILD_DIR=" + build, "CSAN_DEMO_DIR=" + out,
                      "OMP_NUM_THREADS=2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* stage : {"== 1. toy corpus", "== 2. preprocess", "== 3. train tiny-transformer (1 epochs)",
                            "== 4. translate the test set", "== 5. score"})
    EXPECT_NE(r.out.find(stage), std::string::npos) << stage << "\n" << r.out;
  // csan-score's sacreBLEU line with the signature, then chrF's.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(BLEU\|nrefs:1\|case:mixed\|eff:no\|tok:13a\|smooth:exp\|)"
                                                  R"(version:2\.6\.0 = \d+\.\d )")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(chrF2\|nrefs:1\|.* = \d+\.\d)"))) << r.out;
  EXPECT_NE((r.out + r.err).find("done: reached max_epoch 1"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(fs::exists(out + "/checkpoints/checkpoint_best.pt"));
  EXPECT_EQ(split(slurp(out + "/test.hyp"), '\n').size(), 500u);
  EXPECT_EQ(split(slurp(out + "/raw/test.tgt"), '\n').size(), 500u);
}

// The set-up scripts a user meets first answer --help from their header comment without
// installing, building or running anything, and refuse what they do not know in one line.
TEST(Demo, SetUpScriptsAnswerHelpWithoutRunningAndRefuseUnknownArguments) {
  const std::string tools = std::string(CSAN_SOURCE_DIR) + "/tools/";
  struct Script {
    std::string name, header;
  };
  for (const Script& s : {Script{"demo.sh", "The whole pipeline on the built-in toy corpus"},
                          Script{"test.sh", "The test command: installs dependencies"},
                          Script{"build.sh", "Configures (Release) and builds csan"},
                          Script{"install-deps.sh", "Installs the Debian packages csan builds against"}}) {
    const auto r = run({"/bin/bash", tools + s.name, "--help"});
    EXPECT_EQ(r.exit_code, 0) << s.name << ": " << r.err;
    EXPECT_EQ(r.out.rfind(s.header, 0), 0u) << s.name << ":\n" << r.out;
    EXPECT_EQ(r.out.find("#"), std::string::npos) << s.name << ": comment marks left in\n" << r.out;
  }
  for (const char* name : {"demo.sh", "install-deps.sh"}) {
    const auto r = run({"/bin/bash", tools + name, "--no-such-option"});
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_NE(r.err.find("error: unknown"), std::string::npos) << name << ": " << r.err;
    EXPECT_NE(r.err.find("'--no-such-option'"), std::string::npos) << name << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << name << ": " << r.err;
  }
}
