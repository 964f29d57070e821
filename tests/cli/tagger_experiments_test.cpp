// tools/experiments/tagger-table2.sh end to end: --quick (a synthetic treebank, tiny
// dimensions, 3 epochs) produces the table of PE[add] and Conv2d with dev/test accuracy and
// the dev accuracy per epoch; rerun with a second seed it gives mean ± sd over the seeds and
// the test against PE[add]; bad options and missing treebanks are one-line errors. The full
// setting (UD treebanks to early stopping, hours) is not run here.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

// accuracy, oov_accuracy and ambiguous_accuracy of one tagging, recomputed with csan-score
// (4 decimals, as the script scores several seeds).
std::vector<double> accuracies_of(const fs::path& out, const std::string& split, const fs::path& hyp) {
  const auto result =
      run({std::string(CSAN_BIN_DIR) + "/csan-score", "--task", "tagging", (out / "raw" / (split + ".conllu")).string(),
           "-i", hyp.string(), "--train", (out / "raw" / "train.conllu").string(), "--vocab",
           (out / "data-bin" / "Toy" / "dict.words.txt").string(), "-w", "4", "-f", "json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const auto system = nlohmann::json::parse(result.out).at("systems").at(0);
  return {system.at("accuracy").at("score").get<double>(), system.at("oov_accuracy").at("score").get<double>(),
          system.at("ambiguous_accuracy").at("score").get<double>()};
}

std::string mean_and_sd(double a, double b) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f ± %.2f", (a + b) / 2, std::abs(a - b) / std::sqrt(2.0));
  return text;
}

double test_bootstrap_p(const fs::path& scores, const std::string& system) {
  const auto json = nlohmann::json::parse(slurp(scores));
  for (const auto& s : json.at("systems"))
    if (s.at("name") == system) return s.at("accuracy").at("p_value").get<double>();
  ADD_FAILURE() << scores << " has no " << system;
  return 2;
}

// The quick run again with a second seed (the first, 42, is reused, not retrained): rows of
// mean ± sample sd of the two seeds' accuracies, recomputed here from the taggings.
void check_second_seed(const fs::path& out) {
  const auto best_before = fs::last_write_time(out / "Toy" / "pe-add" / "checkpoint_best.pt");
  const auto result = run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir, "--seeds",
                           "42,7", "--systems", "PE[add],Conv2d"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(fs::last_write_time(out / "Toy" / "pe-add" / "checkpoint_best.pt"), best_before);
  const std::string table = slurp(out / "results.md");
  EXPECT_NE(table.find("| Treebank | System | Seeds | Parameters | Epochs | Best epoch | Time per epoch | Dev all | "
                       "Dev OOV | Dev ambiguous | Test all | Test OOV | Test ambiguous | p (test all) vs PE[add] | "
                       "Paper test all | Paper sd |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("seeds 42, 7"), std::string::npos) << table;
  EXPECT_NE(table.find("Welch's t-test"), std::string::npos) << table;
  EXPECT_EQ(table.find("different numbers of seeds"), std::string::npos) << table;
  std::map<std::string, std::vector<std::string>> rows;
  std::stringstream lines(table);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| Toy |", 0) == 0) rows[cells_of(line)[1]] = cells_of(line);
  ASSERT_EQ(rows.size(), 2u) << table;
  for (const char* name : {"PE[add]", "Conv2d"}) {
    const auto& cells = rows.at(name);
    ASSERT_EQ(cells.size(), 16u) << table;
    EXPECT_EQ(cells[2], "2");
    EXPECT_EQ(cells[4], "3, 3");
    EXPECT_TRUE(fs::exists(out / "Toy" / (name == std::string("PE[add]") ? "pe-add" : "conv2d") / "seed7" /
                           "checkpoint_best.pt"));
    for (const auto& [column, split] : std::vector<std::pair<size_t, std::string>>{{7, "dev"}, {10, "test"}}) {
      const auto first = accuracies_of(out, split, out / "hyp" / "Toy" / split / name);
      const auto second = accuracies_of(out, split, out / "hyp" / "seed7" / "Toy" / split / name);
      for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(cells[column + i], mean_and_sd(first[i], second[i])) << name << " " << split << " " << i;
    }
    EXPECT_EQ(cells[15], "–");  // the paper gives no standard deviation per treebank
  }
  EXPECT_EQ(rows.at("PE[add]")[13], "–");
  // One row tested: Holm leaves its p; never below either seed's paired bootstrap.
  std::smatch m;
  ASSERT_TRUE(std::regex_match(rows.at("Conv2d")[13], m, std::regex(R"(([01]\.[0-9]{3})\*? \(([01]\.[0-9]{3})\))")))
      << rows.at("Conv2d")[13];
  EXPECT_EQ(m[1], m[2]);
  for (const char* scores : {"test-scores.json", "test-scores.seed7.json"})
    EXPECT_GE(std::stod(m[2]) + 0.0005, test_bootstrap_p(out / "Toy" / scores, "Conv2d")) << scores;

  // Seeds 1,2 would resume seed 42's runs as seed 1: refused before anything trains.
  const auto mixed =
      run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir, "--seeds", "1,2"});
  EXPECT_NE(mixed.exit_code, 0);
  EXPECT_TRUE(is_one_line(mixed.err)) << mixed.err;
  EXPECT_NE(mixed.err.find("Toy/pe-add: trained with seed 42, not 1"), std::string::npos) << mixed.err;
  EXPECT_FALSE(fs::exists(out / "Toy" / "pe-add" / "seed2"));
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
  check_second_seed(out);
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
                                             {"--systems", "PE[add],Conv3d"},
                                             {"--systems", "Conv2d,,SAN"},
                                             {"--systems", "PE[add],PE[add]"},
                                             {"--seeds", "1,1"},
                                             {"--seeds", "0"},
                                             {"--seeds", "1;2"},
                                             {"--seed", "1", "--seeds", "2"},
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
