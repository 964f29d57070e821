// csan-export end to end: a Transformer csan trained (tests/data/format2-tiny) exported to
// fairseq and imported back translates exactly as fairseq's own SequenceGenerator translated
// the export, which is as csan-generate translated the original
// (tools/interop/check_exports.py); bad options are one-line errors.
// The bit-for-bit round trips of the interop fixtures are in-process
// (tests/unit/foreign/export_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli_runner.h"

namespace fs = std::filesystem;
using namespace csan::testing;

namespace {

const std::string kTiny = std::string(CSAN_SOURCE_DIR) + "/tests/data/format2-tiny";
// What fairseq's own code translated from csan-export's fairseq checkpoint of kTiny.
const std::string kStored = std::string(CSAN_SOURCE_DIR) + "/tests/data/interop/export/csan_tiny_fairseq";

std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err; }
bool is_one_line(const std::string& text) { return std::count(text.begin(), text.end(), '\n') == 1; }

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// fairseq-generate's settings, as tools/interop/check_exports.py ran fairseq's SequenceGenerator.
RunResult translate(const std::string& model, const std::string& input) {
  return run({bin("csan-generate"), "--path", model, "--input", input, "--beam", "5", "--max-len-a", "0.5",
              "--max-len-b", "5", "--batch-size", "1", "--allow-bos", "--output-format", "fairseq"});
}

// H-lines as "ids </s>" through the target dictionary (fairseq's hyp.ids.txt), and their
// scores in natural log (csan-generate prints base 2, as fairseq-generate).
void hypotheses(const std::string& out, const std::string& tgt_dict, std::map<int, std::string>& ids,
                std::map<int, double>& scores) {
  std::map<std::string, int> id_of = {{"<s>", 0}, {"<pad>", 1}, {"</s>", 2}, {"<unk>", 3}};
  for (const auto& line : lines_of(tgt_dict)) id_of.emplace(line.substr(0, line.find(' ')), id_of.size());
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("H-", 0) != 0) continue;
    std::istringstream fields(line.substr(2));
    int sentence;
    double score;
    fields >> sentence >> score;
    std::string joined;
    for (std::string piece; fields >> piece;) joined += std::to_string(id_of.count(piece) ? id_of.at(piece) : -1) + " ";
    ids[sentence] = joined + "2";
    scores[sentence] = score * std::log(2.0);
  }
}

// Exported to fairseq and imported back, the trained model translates as fairseq's own
// SequenceGenerator translated the export (tests/data/interop/export/), which is as csan
// translated the original.
TEST(ExportCli, TrainedTransformerThroughFairseqTranslatesIdentically) {
  const std::string dir = make_temp_dir("export_cli");
  const std::string test = shared_dir() + "/data/multi30k/test2016.en";
  if (!fs::exists(test)) GTEST_SKIP() << "no Multi30k under " << shared_dir();
  const auto all = lines_of(test);
  std::ofstream(dir + "/src.en") << [&] {
    std::string text;
    for (size_t i = 0; i < 200; ++i) text += all.at(i) + "\n";
    return text;
  }();
  RunResult r = run({bin("csan-export"), "--path", kTiny + "/checkpoint.pt", "--to", "fairseq", "--out", dir + "/fs"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  r = run({bin("csan-import"), "--fairseq", dir + "/fs/checkpoint.pt", "--spm", dir + "/fs/spm.model", "--output",
           dir + "/back.pt"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  // No csan-generate run on the original here: check_exports.py found fairseq's translations of
  // the export (kStored) identical to csan-generate's on the original.
  const RunResult after = translate(dir + "/back.pt", dir + "/src.en");
  ASSERT_EQ(after.exit_code, 0) << describe(after);
  std::map<int, std::string> ids;
  std::map<int, double> scores;
  hypotheses(after.out, dir + "/fs/dict.tgt.txt", ids, scores);
  const auto fairseq_ids = lines_of(kStored + "/hyp.ids.txt"), fairseq_scores = lines_of(kStored + "/hyp.scores.txt");
  ASSERT_EQ(fairseq_ids.size(), 200u);
  ASSERT_EQ(ids.size(), 200u);
  for (int i = 0; i < 200; ++i) {
    // csan-generate's text leaves <s> (0) out, as fairseq-generate's does.
    std::istringstream fields(fairseq_ids[i]);
    std::string printed;
    for (std::string id; fields >> id;)
      if (id != "0") printed += (printed.empty() ? "" : " ") + id;
    EXPECT_EQ(ids.at(i), printed) << "sentence " << i;
    EXPECT_NEAR(scores.at(i), std::stod(fairseq_scores[i]), 1e-4) << "sentence " << i;
  }
}

TEST(ExportCli, BadOptionsAreOneLineErrors) {
  const std::string dir = make_temp_dir("export_cli_options");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--to", "fairseq", "--out", dir + "/x"}, "missing --path CHECKPOINT"},
      {{"--path", kTiny + "/checkpoint.pt", "--to", "onnx", "--out", dir + "/x"},
       "--to: 'onnx' is not fairseq or marian"},
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
