// tools/demo.sh, the README's first command, end to end: toy corpus, preprocess, training,
// translation of the test set and its BLEU, with the executables of this build
// (CSAN_DEMO_SKIP_SETUP: no install, no build from inside ctest) and one epoch of 4,000
// sentences instead of ten of 20,000, so it checks that the pipeline's commands and options still fit together, not how
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
                     {"CSAN_DEMO_SKIP_SETUP=1", "CSAN_DEMO_EPOCHS=1", "CSAN_DEMO_TRAIN_SENTENCES=4000", "CSAN_DEMO_SPM_VOCAB=400", "CSAN_BUILD_DIR=" + build, "CSAN_DEMO_DIR=" + out,
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
