// tools/experiments/tagger-table2.sh end to end: --quick (a synthetic treebank, tiny
// dimensions, 3 epochs) produces the table of PE[add] and Conv2d with dev/test accuracy and
// the dev accuracy per epoch; bad options and missing treebanks are one-line errors. The
// full setting (UD treebanks to early stopping, hours) is not run here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli_runner.h"
#include "tests/support/text_files.h"

namespace fs = std::filesystem;
using csan::testing::run;
using csan::testing::slurp;

namespace {

const std::string kScript = std::string(CSAN_SOURCE_DIR) + "/tools/experiments/tagger-table2.sh";
const std::string kBuildDir = fs::path(CSAN_TOOLS_DIR).parent_path().string();

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, '|');) {
    const auto a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
    cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  cells.erase(cells.begin());  // before the first '|'
  return cells;
}

bool is_one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
}

TEST(TaggerTable2, QuickRunWritesTheTableAndTheDevCurves) {
  const fs::path out = csan::testing::make_temp_dir("tagger_table2_quick");
  const auto result = run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string table = slurp(out / "results.md");
  EXPECT_EQ(result.out, table);  // the table is also printed
  EXPECT_NE(table.find("| Treebank | System | Parameters | Epochs | Best epoch | Time per epoch | Dev all | Dev OOV | "
                       "Dev ambiguous | Test all | Test OOV | Test ambiguous | Paper test all |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("Commit "), std::string::npos);

  std::map<std::string, std::vector<std::string>> rows;
  std::map<std::string, std::vector<std::string>> epochs;
  std::stringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| Toy |", 0) == 0) {
      const auto cells = cells_of(line);
      rows[cells[1]] = cells;
    } else if (std::regex_match(line, std::regex("\\| [0-9]+ \\| .*"))) {
      const auto cells = cells_of(line);
      epochs[cells[0]] = cells;
    }
  }
  ASSERT_EQ(rows.size(), 2u) << table;
  for (const char* name : {"PE[add]", "Conv2d"}) {
    ASSERT_TRUE(rows.count(name)) << name << "\n" << table;
    const auto& cells = rows.at(name);
    ASSERT_EQ(cells.size(), 13u) << table;
    EXPECT_TRUE(std::regex_match(cells[2], std::regex("[0-9]{1,3}(,[0-9]{3})+"))) << cells[2];
    EXPECT_EQ(cells[3], "3");  // --quick trains 3 epochs
    EXPECT_GE(std::stoi(cells[4]), 1);
    EXPECT_LE(std::stoi(cells[4]), 3);
    for (int i = 6; i <= 11; ++i) {
      const double score = std::stod(cells[i]);
      EXPECT_GE(score, 0.0) << cells[i];
      EXPECT_LE(score, 100.0) << cells[i];
    }
    EXPECT_EQ(cells[12], "–");  // no paper figure for the synthetic treebank
  }
  // Conv2d: 10 parameters per head and layer more (2 layers of 2 heads in --quick).
  auto count = [](std::string s) { return std::stol(std::regex_replace(s, std::regex(","), "")); };
  EXPECT_EQ(count(rows.at("Conv2d")[2]) - count(rows.at("PE[add]")[2]), 40);
  // One dev accuracy per epoch and system, and the best epoch's is the table's dev figure.
  ASSERT_EQ(epochs.size(), 3u) << table;
  for (int system = 0; system < 2; ++system) {
    const auto& row = rows.at(system == 0 ? "PE[add]" : "Conv2d");
    EXPECT_EQ(epochs.at(row[4])[1 + system], row[6]) << table;
  }
  for (const char* split : {"dev", "test"})
    for (const char* name : {"PE[add]", "Conv2d"})
      EXPECT_GT(slurp(out / "hyp" / "Toy" / split / name).size(), 1000u) << split << " " << name;
  EXPECT_NE(slurp(out / "Toy" / "test-scores.json").find("\"baseline\": true"), std::string::npos);
  if (fs::exists(out / "Toy-curves.png"))
    EXPECT_EQ(slurp(out / "Toy-curves.png").substr(0, 4), "\x89PNG");
  else
    EXPECT_NE(result.err.find("no plots: python3-matplotlib is not installed"), std::string::npos) << result.err;
}

TEST(TaggerTable2, MissingTreebankIsAOneLineErrorNamingIt) {
  const fs::path out = csan::testing::make_temp_dir("tagger_table2_nodata");
  const auto result = run({"/bin/bash", kScript, "--data", "/nonexistent/ud", "--treebanks", "GUM", "--out",
                           out.string(), "--build", kBuildDir});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(is_one_line(result.err)) << result.err;
  EXPECT_NE(result.err.find("/nonexistent/ud/UD_English-GUM/en_gum-ud-train.conllu"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(out / "data-bin"));
}

TEST(TaggerTable2, BadOptionsAreOneLineErrors) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--quik"},
                                             {"--seed", "x"},
                                             {"--max-epoch", "0"},
                                             {"--treebanks", "EWT"},
                                             {"--out"},
                                             {"--quick", "--build", "/nonexistent/build"}}) {
    std::vector<std::string> argv = {"/bin/bash", kScript};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = run(argv);
    EXPECT_NE(result.exit_code, 0) << args[0];
    EXPECT_TRUE(is_one_line(result.err)) << result.err;
    EXPECT_NE(result.err.find(args.size() == 3 ? args.back() : args[0]), std::string::npos) << result.err;
  }
}

}  // namespace
