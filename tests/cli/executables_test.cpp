// Every executable exists and runs; unimplemented ones say so and exit 2.
#include <gtest/gtest.h>

#include "cli_runner.h"

namespace {

TEST(Executables, AllFourRun) {
  for (const char* name : {"csan-preprocess", "csan-train", "csan-generate", "csan-score"}) {
    auto r = csan::testing::run({csan::testing::bin(name), "--help"});
    EXPECT_NE(r.exit_code, 127) << name << " did not start";
    if (r.exit_code == 2) {
      EXPECT_NE(r.err.find("not implemented yet"), std::string::npos) << name;
    }
  }
}

}  // namespace
