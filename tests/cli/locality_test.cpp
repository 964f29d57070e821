// The locality baselines end to end: tools/experiments/locality-table1.sh --quick trains
// the Transformer, the seven methods and 2-D CSAN with csan-train, translates with
// csan-generate from the checkpoints alone (REL_POS decodes incrementally through its
// decoder and cross-attention entries) and writes the table with parameters, speed, BLEU,
// paired-bootstrap p-values and Table 1's columns. Bad values of the methods' keys are
// one-line csan-train errors naming the key; bad options of the script and a bad
// paper-columns file of results_table.py are one-line errors. The full setting (a day of
// training) is not run here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "cli_runner.h"
#include "tests/support/markdown_table.h"

namespace fs = std::filesystem;
using csan::testing::bin;
using csan::testing::run;
using csan::testing::slurp;
using csan::testing::split;
using csan::testing::table_rows;

namespace {

const std::string kScript = std::string(CSAN_SOURCE_DIR) + "/tools/experiments/locality-table1.sh";
const std::string kBuildDir = fs::path(CSAN_TOOLS_DIR).parent_path().string();
const std::vector<std::string> kSystems = {"Transformer", "BI_DIRECT", "REL_POS", "NEIGHBOR", "LOCAL_HARD",
                                           "LOCAL_SOFT",  "BLOCK",     "CNNs",    "CSAN-2D"};

int64_t number(std::string cell) {
  cell.erase(std::remove(cell.begin(), cell.end(), ','), cell.end());
  return std::stoll(cell);
}

bool is_one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
}

// results_table.py's --paper-columns file (here a wrong one beside the run's real
// outputs): each fault is a one-line error naming the file.
void expect_bad_paper_columns_refused(const fs::path& out) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"{\"columns\": [\"a\"", "malformed JSON"},
      {"[1, 2]", "expected"},
      {"{\"columns\": [\"a\", \"b\"], \"rows\": {\"REL_POS\": [\"x\"]}}", "row 'REL_POS' needs 2 cells"},
      {"{\"columns\": [\"a\"], \"rows\": {\"GRU\": [\"x\"]}}", "row 'GRU' is not a system"}};
  int n = 0;
  for (const auto& [text, part] : files) {
    const fs::path file = out / ("paper" + std::to_string(n++) + ".json");
    std::ofstream(file) << text;
    const auto r = run({"/usr/bin/python3", std::string(CSAN_SOURCE_DIR) + "/tools/experiments/results_table.py",
                        "--output", (out / "bad.md").string(), "--title", "t", "--setting", "s", "--paper-columns",
                        file.string(), "--valid-scores", (out / "valid-scores.json").string(), "--test-scores",
                        (out / "test-scores.json").string(), "Transformer=" + (out / "transformer").string(),
                        "REL_POS=" + (out / "rel_pos").string()});
    EXPECT_EQ(r.exit_code, 1) << text;
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(file.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out / "bad.md"));
  }
}

TEST(LocalityTable1, QuickRunWritesTheTableOfTheNineSystems) {
  const fs::path out = csan::testing::make_temp_dir("locality_table1_quick");
  const auto result = run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string table = slurp(out / "results.md");
  EXPECT_EQ(result.out, table);
  EXPECT_NE(table.find("| System | Parameters | Time per update | Valid BLEU | Valid chrF2 | Test BLEU | Test chrF2 | "
                       "p (BLEU) vs Transformer | p (chrF2) vs Transformer | Parameters added | Speed vs Transformer | "
                       "Table 1: parameters | Table 1: speed | Table 1: BLEU |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("Commit "), std::string::npos);
  const auto rows = table_rows(table);
  ASSERT_EQ(rows.size(), kSystems.size()) << table;
  const int64_t transformer = number(rows.at("Transformer").at(1));
  // What each method adds to transformer_tiny (d 64, 4 heads, 16 per head) where the
  // script puts it: exact counts, as csan-train logged them.
  const std::map<std::string, int64_t> added = {
      {"Transformer", 0},
      {"BI_DIRECT", 0},
      {"REL_POS", 6 * 32 * 32},                                      // 6 attentions x 2k x (a^K | a^V)
      {"NEIGHBOR", 4},                                               // a width per head
      {"LOCAL_HARD", (64 * 32 + 32) + (32 * 2 + 2)},                 // 2 local heads
      {"LOCAL_SOFT", (64 * 64 + 64) + (64 * 8 + 8)},                 // 4 local heads
      {"BLOCK", 2 * (4 * 64 * 64 + 3 * 64 + 64 * 4 + 4 + 64 * 64)},  // both encoder layers
      {"CNNs", 4 * (64 * 7 + 64 * 64 + 64 + 2 * 64)},                // 4 convolutions
      {"CSAN-2D", 0}};
  for (const std::string& name : kSystems) {
    ASSERT_TRUE(rows.count(name)) << name << "\n" << table;
    const auto& cells = rows.at(name);
    ASSERT_EQ(cells.size(), 14u) << table;
    EXPECT_EQ(number(cells[1]) - transformer, added.at(name)) << name;
    EXPECT_EQ(number(cells[9]), added.at(name)) << name;
    EXPECT_TRUE(std::regex_match(cells[2], std::regex("[0-9]+\\.[0-9]{3} s"))) << cells[2];
    EXPECT_TRUE(std::regex_match(cells[10], std::regex("[0-9]+\\.[0-9]{2}"))) << cells[10];
    for (int i = 3; i <= 6; ++i) {
      EXPECT_GE(std::stod(cells[i]), 0.0);
      EXPECT_LE(std::stod(cells[i]), 100.0);
    }
    if (name == "Transformer") {
      EXPECT_EQ(cells[7], "–");
      EXPECT_EQ(cells[10], "1.00");
    } else {
      for (int i : {7, 8}) EXPECT_TRUE(std::regex_match(cells[i], std::regex("[01]\\.[0-9]{3}\\*?"))) << cells[i];
    }
    EXPECT_NE(cells[11], "–") << name << ": Table 1's column";
    EXPECT_EQ(split(slurp(out / "hyp" / "test" / name), '\n').size(), 60u) << name;
  }
  EXPECT_EQ(rows.at("REL_POS")[11], "+0.1M");
  EXPECT_EQ(rows.at("CNNs")[12], "0.74 (0.58)");
  if (fs::exists(out / "curves.png")) {
    EXPECT_EQ(slurp(out / "curves.png").substr(0, 4), "\x89PNG");
    EXPECT_TRUE(fs::exists(out / "test-significance.png"));
  } else {
    EXPECT_NE(result.err.find("no plots: python3-matplotlib is not installed"), std::string::npos) << result.err;
  }
  expect_bad_paper_columns_refused(out);
}

TEST(LocalityTable1Options, BadOptionsAreOneLineErrors) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--quik"}, {"--seed", "-1"}, {"--build"}, {"--quick", "--build", "/nonexistent/build"}}) {
    std::vector<std::string> argv = {"/bin/bash", kScript};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = run(argv);
    EXPECT_NE(result.exit_code, 0) << args[0];
    EXPECT_TRUE(is_one_line(result.err)) << result.err;
    EXPECT_NE(result.err.find(args.back() == "/nonexistent/build" ? "/nonexistent/build" : args[0]), std::string::npos)
        << result.err;
  }
  const auto no_data = run({"/bin/bash", kScript, "--data", "/nonexistent/multi30k", "--out",
                            csan::testing::make_temp_dir("locality_table1_nodata")});
  EXPECT_NE(no_data.exit_code, 0);
  EXPECT_TRUE(is_one_line(no_data.err)) << no_data.err;
  EXPECT_NE(no_data.err.find("/nonexistent/multi30k"), std::string::npos) << no_data.err;
}

// --variants adds the reviewer's variants as systems of their own; --systems trains one of
// them (here the authors' LOCAL_HARD and BLOCK in the lowest layer) with its own settings.
TEST(LocalityTable1, VariantsAreSystemsWithTheirOwnSettings) {
  const fs::path out = csan::testing::make_temp_dir("locality_table1_variants");
  const auto result = run({"/bin/bash", kScript, "--quick", "--variants", "--out", out.string(), "--build", kBuildDir,
                           "--systems", "LOCAL_HARD-authors,BLOCK-lowest"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(split(slurp(out / "hyp" / "test" / "LOCAL_HARD-authors"), '\n').size(), 60u);
  EXPECT_EQ(split(slurp(out / "hyp" / "test" / "BLOCK-lowest"), '\n').size(), 60u);
  const std::string authors = slurp(out / "local_hard_authors" / "recipe.yaml");
  EXPECT_TRUE(std::regex_search(authors, std::regex("\n +form: authors\n"))) << authors;
  const std::string block = slurp(out / "block_lowest" / "recipe.yaml");
  EXPECT_NE(block.find("  block:\n    encoder_layers: [0]\n    size: 4\n"), std::string::npos) << block;
  // Without --variants they are no systems of the table.
  const auto plain =
      run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir, "--systems", "BLOCK-8"});
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_NE(plain.err.find("--systems: no system 'BLOCK-8'"), std::string::npos) << plain.err;
}

// csan-train refuses a bad value of a method's key before it starts: one line naming the
// key, a non-zero exit, no save directory.
TEST(LocalityTrain, BadValuesAreOneLineErrorsNamingTheKey) {
  const std::string data = csan::testing::make_toy_data("locality_bad_values", 60, 10, 1);
  const std::string recipe = std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--arch", "locality_local_hard_tiny", "--set", "model.local_hard.window=0"}, "model.local_hard.window"},
      {{"--arch", "locality_rel_pos_tiny", "--set", "model.rel_pos.clip=-1"}, "model.rel_pos.clip"},
      {{"--arch", "locality_block_tiny", "--set", "model.block.size=257"}, "model.block.size"},
      {{"--arch", "locality_bi_direct_tiny", "--set", "model.attention.decoder.self=[bi_direct]"},
       "model.attention.decoder.self"},
      {{"--arch", "locality_cnns_tiny", "--set", "model.cnns.kernel_size=6"}, "model.cnns.kernel_size"},
      {{"--arch", "transformer_tiny", "--set", "model.neighbor.init_std=2"}, "model.neighbor.init_std"},
      {{"--arch", "locality_local_hard_tiny", "--set", "model.local_hard.form=gaussian"}, "model.local_hard.form"},
  };
  int n = 0;
  for (const auto& [args, key] : cases) {
    const std::string save = csan::testing::make_temp_dir("locality_bad_values_run") + "/run" + std::to_string(n++);
    std::vector<std::string> argv = {bin("csan-train"), recipe, "--data", data, "--save-dir", save};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run(argv);
    EXPECT_NE(r.exit_code, 0) << key;
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(save)) << key;
  }
}

}  // namespace
