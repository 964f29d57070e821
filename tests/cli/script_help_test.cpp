// Every script a user runs from tools/ (set-up, benchmarks, experiments, the GPU driver)
// answers --help with the comment block at its top, exactly, and exit 0, without
// installing, building or running anything; the set-up scripts that take no positional
// arguments refuse an unknown one in one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "tests/support/text_files.h"

namespace fs = std::filesystem;
using csan::testing::run;
using csan::testing::slurp;
using csan::testing::split;

namespace {

const fs::path kTools = fs::path(CSAN_SOURCE_DIR) / "tools";

// Scripts that run (a #! line); the sourced ones (experiments/common.sh, gpu/build-env.sh,
// script-help.sh) have none.
std::vector<fs::path> runnable_scripts() {
  std::vector<fs::path> scripts;
  for (const auto& entry : fs::recursive_directory_iterator(kTools))
    if (entry.path().extension() == ".sh" && slurp(entry.path().string()).rfind("#!", 0) == 0)
      scripts.push_back(entry.path());
  return scripts;
}

// The comment block after the #! line, without its comment marks.
std::string header_of(const fs::path& script) {
  std::string header;
  const auto lines = split(slurp(script.string()), '\n');
  for (size_t i = 1; i < lines.size() && lines[i].rfind('#', 0) == 0; ++i)
    header += lines[i].substr(lines[i].rfind("# ", 0) == 0 ? 2 : 1) + "\n";
  return header;
}

TEST(ScriptHelp, EveryScriptInToolsPrintsItsHeaderForHelp) {
  const auto scripts = runnable_scripts();
  ASSERT_GE(scripts.size(), 15u) << "tools/ lost its scripts?";
  for (const auto& script : scripts) {
    const std::string name = fs::relative(script, kTools).string();
    const std::string header = header_of(script);
    ASSERT_GT(header.size(), 40u) << name << " has no usage comment at its top";
    // Run it only when it can answer: a script without the handling would do its work
    // (install, build, train) here.
    const std::string code = slurp(script.string());
    if (code.find("help_if_asked") == std::string::npos && code.find("script_help") == std::string::npos &&
        code.find("experiment_options") == std::string::npos) {
      ADD_FAILURE() << name << " does not handle --help (tools/script-help.sh: help_if_asked \"$0\" \"$@\")";
      continue;
    }
    for (const char* flag : {"--help", "-h"}) {
      const auto r = run({"/bin/bash", script.string(), flag});
      EXPECT_EQ(r.exit_code, 0) << name << " " << flag << ": " << r.err;
      EXPECT_EQ(r.out, header) << name << " " << flag;
    }
  }
}

TEST(ScriptHelp, SetUpScriptsRefuseAnUnknownArgumentInOneLine) {
  for (const char* name : {"demo.sh", "install-deps.sh"}) {
    const auto r = run({"/bin/bash", (kTools / name).string(), "--no-such-option"});
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_NE(r.err.find("error: unknown"), std::string::npos) << name << ": " << r.err;
    EXPECT_NE(r.err.find("'--no-such-option'"), std::string::npos) << name << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << name << ": " << r.err;
  }
}

}  // namespace
