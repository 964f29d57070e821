// csan-export end to end: a Transformer csan trained (tests/data/format2-tiny) exported to
// fairseq and imported back translates exactly as before; bad options are one-line errors.
// The bit-for-bit round trips of the interop fixtures are in-process
// (tests/unit/foreign/export_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"

namespace fs = std::filesystem;
using namespace csan::testing;

namespace {

const std::string kTiny = std::string(CSAN_SOURCE_DIR) + "/tests/data/format2-tiny";

std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err; }
bool is_one_line(const std::string& text) { return std::count(text.begin(), text.end(), '\n') == 1; }
std::string without_summary(const std::string& out) { return out.substr(0, out.rfind("Translated ")); }

RunResult translate(const std::string& model) {
  return run({bin("csan-generate"), "--path", model, "--input", kTiny + "/test.src", "--beam", "5", "--output-format",
              "fairseq"});
}

TEST(ExportCli, TrainedTransformerThroughFairseqTranslatesIdentically) {
  const std::string dir = make_temp_dir("export_cli");
  RunResult r = run({bin("csan-export"), "--path", kTiny + "/checkpoint.pt", "--to", "fairseq", "--out", dir + "/fs"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  r = run({bin("csan-import"), "--fairseq", dir + "/fs/checkpoint.pt", "--spm", dir + "/fs/spm.model", "--output",
           dir + "/back.pt"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const RunResult before = translate(kTiny + "/checkpoint.pt"), after = translate(dir + "/back.pt");
  ASSERT_EQ(before.exit_code, 0) << describe(before);
  ASSERT_EQ(after.exit_code, 0) << describe(after);
  EXPECT_NE(before.out.find("H-4"), std::string::npos) << before.out;
  EXPECT_EQ(without_summary(after.out), without_summary(before.out));
}

TEST(ExportCli, BadOptionsAreOneLineErrors) {
  const std::string dir = make_temp_dir("export_cli_options");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--to", "fairseq", "--out", dir + "/x"}, "missing --path CHECKPOINT"},
      {{"--path", kTiny + "/checkpoint.pt", "--to", "onnx", "--out", dir + "/x"}, "--to: 'onnx' is not fairseq or marian"},
      {{"--path", kTiny + "/checkpoint.pt", "--to", "marian", "--out", dir + "/x"},
       "model.sinusoidal_layout fairseq: MarianMT cannot express it"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> command = {bin("csan-export")};
    command.insert(command.end(), args.begin(), args.end());
    const RunResult r = run(command);
    EXPECT_NE(r.exit_code, 0) << message;
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/x"));
  }
}

}  // namespace
