// tools/experiments/csan-table2.sh and ccn-vs-transformer.sh end to end: --quick (toy
// corpus, tiny recipes) produces the results table of the compared systems, --jobs trains
// them side by side into the same translations, --systems trains a subset, and bad
// options are one-line errors. The full settings (hours of training) are not run here.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli_runner.h"
#include "tests/support/markdown_table.h"

namespace fs = std::filesystem;
using csan::testing::run;
using csan::testing::slurp;
using csan::testing::split;
using csan::testing::table_rows;

namespace {

const std::string kScript = std::string(CSAN_SOURCE_DIR) + "/tools/experiments/csan-table2.sh";
const std::string kCcnScript = std::string(CSAN_SOURCE_DIR) + "/tools/experiments/ccn-vs-transformer.sh";
const std::string kBuildDir = fs::path(CSAN_TOOLS_DIR).parent_path().string();

// The first CPU this process may run on, for `taskset -c` (a machine of one CPU for the script).
std::string first_usable_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) return std::to_string(cpu);
  return "0";
}

bool is_one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
}

// The table of a whole one-seed quick run (RESULT: its output) of the three systems.
void expect_one_seed_table(const fs::path& out, const csan::testing::RunResult& result) {
  const std::string table = slurp(out / "results.md");
  EXPECT_EQ(result.out, table);  // the table is also printed
  EXPECT_NE(table.find("| System | Parameters | Time per update | Valid BLEU | Valid chrF2 | Test BLEU | Test chrF2 |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("Commit "), std::string::npos);  // the run says what produced it

  const auto rows = table_rows(table);
  ASSERT_EQ(rows.size(), 3u) << table;
  for (const char* name : {"Transformer", "CSAN-1D", "CSAN-2D"}) {
    ASSERT_TRUE(rows.count(name)) << name << "\n" << table;
    const auto& cells = rows.at(name);
    ASSERT_EQ(cells.size(), 9u) << table;
    // CSAN is parameter-free: the three parameter counts are equal.
    EXPECT_EQ(cells[1], rows.at("Transformer")[1]);
    EXPECT_TRUE(std::regex_match(cells[1], std::regex("[0-9]{1,3}(,[0-9]{3})+"))) << cells[1];
    EXPECT_TRUE(std::regex_match(cells[2], std::regex("[0-9]+\\.[0-9]{3} s"))) << cells[2];
    EXPECT_GT(std::stod(cells[2]), 0.0);
    for (int i = 3; i <= 6; ++i) {
      const double score = std::stod(cells[i]);
      EXPECT_GE(score, 0.0);
      EXPECT_LE(score, 100.0);
    }
    if (std::string(name) == "Transformer") {
      EXPECT_EQ(cells[7], "–");
      EXPECT_EQ(cells[8], "–");
    } else {
      for (int i : {7, 8}) EXPECT_TRUE(std::regex_match(cells[i], std::regex("[01]\\.[0-9]{3}\\*?"))) << cells[i];
    }
    // Every test sentence was translated, in order, one line each.
    EXPECT_EQ(split(slurp(out / "hyp" / "test" / name), '\n').size(), 100u) << name;
  }
  // The test BLEU in the table is csan-score's.
  EXPECT_NE(slurp(out / "test-scores.json").find("\"system\": \"Baseline: Transformer\""), std::string::npos);
  if (fs::exists(out / "curves.png")) {
    EXPECT_EQ(slurp(out / "curves.png").substr(0, 4), "\x89PNG");
    EXPECT_TRUE(fs::exists(out / "test-significance.png"));
  } else {
    EXPECT_NE(result.err.find("no plots: python3-matplotlib is not installed"), std::string::npos) << result.err;
  }
}

TEST(CsanTable2, MissingDataIsAOneLineErrorNamingIt) {
  const fs::path out = csan::testing::make_temp_dir("csan_table2_nodata");
  const auto result =
      run({"/bin/bash", kScript, "--data", "/nonexistent/multi30k", "--out", out.string(), "--build", kBuildDir});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(is_one_line(result.err)) << result.err;
  EXPECT_NE(result.err.find("/nonexistent/multi30k"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("train.en"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(out / "data-bin"));
}

TEST(CsanTable2, BadOptionsAreOneLineErrors) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--quik"},
                                             {"--seed", "x"},
                                             {"--out"},
                                             {"--quick", "--build", "/nonexistent/build"},
                                             {"--jobs", "0"},
                                             {"--jobs", "two"},
                                             {"--precision", "fp8"},
                                             {"--systems"},
                                             {"--report-only", "--systems", "CSAN-1D"},
                                             {"--seeds", ""},
                                             {"--seeds", "0"},
                                             {"--seeds", "1,2,1"},
                                             {"--seeds", "one"},
                                             {"--seeds", "1,,2"},
                                             {"--seed", "2", "--seeds", "1,2"}}) {
    std::vector<std::string> argv = {"/bin/bash", kScript};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = run(argv);
    EXPECT_NE(result.exit_code, 0) << args[0];
    EXPECT_TRUE(is_one_line(result.err)) << result.err;
    EXPECT_NE(result.err.find(args.back() == "/nonexistent/build" ? "/nonexistent/build" : args[0]), std::string::npos)
        << result.err;
  }
}

// tools/experiments/multilingual-multi30k.sh (hours in full; its --quick is not run here): its
// own options are checked before anything is written.
TEST(MultilingualMulti30k, BadOptionsAreOneLineErrors) {
  const std::string script = std::string(CSAN_SOURCE_DIR) + "/tools/experiments/multilingual-multi30k.sh";
  const fs::path out = csan::testing::make_temp_dir("csan_multilingual_options");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{{"--max-update"},
                                                                                    {"--max-update", "0"},
                                                                                    {"--max-update", "ten"},
                                                                                    {"--lang-tok-style", "both"},
                                                                                    {"--recipe", "/nonexistent.yaml"},
                                                                                    {"--seeds", "1,2"}}) {
    std::vector<std::string> argv = {"/bin/bash", script, "--quick", "--out", out.string(), "--build", kBuildDir};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = run(argv);
    EXPECT_NE(result.exit_code, 0) << args[0];
    EXPECT_TRUE(is_one_line(result.err)) << result.err;
    EXPECT_NE(result.err.find(args[0]), std::string::npos) << result.err;
  }
  EXPECT_TRUE(fs::is_empty(out)) << "nothing written before the options are checked";
}

// CCN against the Transformer with one recipe (ccn-tiny.yaml, --arch transformer_tiny):
// the table has both systems, CCN with its second branch's and crossed decoder's
// parameters, scores, and a p-value against the Transformer.
TEST(CcnVsTransformer, QuickRunWritesTheTableOfBothSystems) {
  const fs::path out = csan::testing::make_temp_dir("ccn_vs_transformer_quick");
  // --build relative to the working directory: the script's steps run inside OUT.
  const std::string build = fs::relative(kBuildDir, fs::current_path()).string();
  const auto result = run({"/bin/bash", kCcnScript, "--quick", "--out", out.string(), "--build", build});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string table = slurp(out / "results.md");
  EXPECT_EQ(result.out, table);
  EXPECT_NE(table.find("# CCN vs Transformer (Li & Jiang 2020), toy corpus (quick check)"), std::string::npos) << table;
  EXPECT_NE(table.find("| System | Parameters | Time per update | Valid BLEU | Valid chrF2 | Test BLEU | Test chrF2 |"),
            std::string::npos)
      << table;
  const auto rows = table_rows(table);
  ASSERT_EQ(rows.size(), 2u) << table;
  ASSERT_TRUE(rows.count("Transformer") && rows.count("CCN")) << table;
  auto parameters = [&](const std::string& name) {
    std::string digits;
    for (char c : rows.at(name)[1])
      if (c != ',') digits += c;
    return std::stoll(digits);
  };
  // d 64, 2 + 2 layers: the second branch 2 (12 d^2 + 9 d) + 2 d, the decoder 2 (22 d^2 + 19 d).
  const int64_t d = 64;
  EXPECT_EQ(parameters("CCN") - parameters("Transformer"),
            2 * (12 * d * d + 9 * d) + 2 * d + 2 * (22 * d * d + 19 * d));
  for (const char* name : {"Transformer", "CCN"}) {
    const auto& cells = rows.at(name);
    ASSERT_EQ(cells.size(), 9u) << table;
    EXPECT_TRUE(std::regex_match(cells[2], std::regex("[0-9]+\\.[0-9]{3} s"))) << cells[2];
    for (int i = 3; i <= 6; ++i) {
      EXPECT_GE(std::stod(cells[i]), 0.0);
      EXPECT_LE(std::stod(cells[i]), 100.0);
    }
    EXPECT_EQ(split(slurp(out / "hyp" / "test" / name), '\n').size(), 100u) << name;
  }
  EXPECT_TRUE(std::regex_match(rows.at("CCN")[7], std::regex("[01]\\.[0-9]{3}\\*?"))) << rows.at("CCN")[7];
  EXPECT_EQ(rows.at("Transformer")[7], "–");
  // Each system trained its own arch from the one recipe.
  EXPECT_NE(slurp(out / "ccn" / "run.json").find("\"arch\": \"ccn_tiny\""), std::string::npos);
  EXPECT_NE(slurp(out / "transformer" / "run.json").find("\"arch\": \"transformer_tiny\""), std::string::npos);

  // --jobs 2: both systems at once, each with its share of the CPUs (here one CPU, so one
  // thread each, as the run above had), and --no-valid-bleu: validations without BLEU
  // choose the same checkpoints, so the same translations; the table says how the times
  // were taken and which runs validated without BLEU.
  const fs::path side_by_side = csan::testing::make_temp_dir("ccn_vs_transformer_quick_jobs");
  const auto jobs =
      run({"/usr/bin/taskset", "-c", first_usable_cpu(), "/bin/bash", kCcnScript, "--quick", "--out",
           side_by_side.string(), "--build", build, "--jobs", "2", "--precision", "fp32", "--no-valid-bleu"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  for (const char* split_name : {"valid", "test"})
    for (const char* name : {"Transformer", "CCN"})
      EXPECT_EQ(slurp(side_by_side / "hyp" / split_name / name), slurp(out / "hyp" / split_name / name))
          << split_name << " " << name;
  const std::string jobs_table = slurp(side_by_side / "results.md");
  EXPECT_NE(jobs_table.find("Trained with --precision fp32. 2 systems trained at once (--jobs 2)"), std::string::npos)
      << jobs_table;
  EXPECT_EQ(table.find("trained at once"), std::string::npos);
  EXPECT_NE(jobs_table.find("Validated without BLEU during training (--no-valid-bleu; the same checkpoints are chosen, "
                            "by validation loss): Transformer CCN, whose curves show losses only."),
            std::string::npos)
      << jobs_table;
  EXPECT_EQ(table.find("Validated without BLEU"), std::string::npos);
  EXPECT_NE(slurp(out / "ccn" / "metrics.jsonl").find("\"bleu\""), std::string::npos);
  EXPECT_EQ(slurp(side_by_side / "ccn" / "metrics.jsonl").find("\"bleu\""), std::string::npos);
  EXPECT_NE(slurp(side_by_side / "ccn" / "train.log").find("1 thread (common.threads)"), std::string::npos);
}

// With --jobs, systems that fail (here csan-train refuses the seed) fail the run: each
// system's error, then one naming them all, and no table.
TEST(CcnVsTransformer, SystemsFailingSideBySideFailTheRunNamingThem) {
  const fs::path out = csan::testing::make_temp_dir("ccn_vs_transformer_failing_jobs");
  const auto result = run({"/bin/bash", kCcnScript, "--quick", "--out", out.string(), "--build", kBuildDir, "--jobs",
                           "2", "--seed", "99999999999999999999999"});
  EXPECT_NE(result.exit_code, 0);
  for (const char* part : {"error: csan-train failed for Transformer", "error: csan-train failed for CCN",
                           "error: Transformer CCN: failed (see the errors above)"})
    EXPECT_NE(result.err.find(part), std::string::npos) << part << "\n" << result.err;
  EXPECT_FALSE(fs::exists(out / "results.md"));
}

// --systems: only the named systems train and translate, and no table is written (a later
// run without it adds the others and the table); a name that is not a system is an error.
// --report-only then writes the table from what the runs left in OUT, and a whole run
// finds every system done and writes the same rows (checked as a one-seed table).
void systems_then_report_only(const fs::path& out) {
  const auto result =
      run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir, "--systems", "CSAN-1D"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(split(slurp(out / "hyp" / "test" / "CSAN-1D"), '\n').size(), 100u);
  EXPECT_FALSE(fs::exists(out / "transformer"));
  EXPECT_FALSE(fs::exists(out / "csan2d"));
  EXPECT_FALSE(fs::exists(out / "results.md"));
  EXPECT_NE(result.err.find("trained and translated CSAN-1D (--systems)"), std::string::npos) << result.err;

  const auto unknown =
      run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir, "--systems", "CSAN-3D"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(is_one_line(unknown.err)) << unknown.err;
  EXPECT_NE(unknown.err.find("--systems: no system 'CSAN-3D' (the systems: Transformer,CSAN-1D,CSAN-2D)"),
            std::string::npos)
      << unknown.err;

  // --report-only: the table from the outputs in OUT, without training; a system without
  // its outputs is a one-line error naming the missing file.
  const std::vector<std::string> report_only = {"/bin/bash",  kScript,   "--quick", "--out",
                                                out.string(), "--build", kBuildDir, "--report-only"};
  const auto missing = run(report_only);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(is_one_line(missing.err)) << missing.err;
  EXPECT_NE(missing.err.find("--report-only: Transformer has no " + (out / "transformer" / "train.log").string()),
            std::string::npos)
      << missing.err;
  EXPECT_FALSE(fs::exists(out / "transformer"));  // nothing trained

  const auto rest = run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir, "--systems",
                         "Transformer,CSAN-2D"});
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  const auto assembled = run(report_only);
  ASSERT_EQ(assembled.exit_code, 0) << assembled.err;
  const std::string table = slurp(out / "results.md");
  EXPECT_NE(table.find("Table assembled with --report-only"), std::string::npos) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex("Runs: Transformer, CSAN-1D, CSAN-2D: csan [^,]+, on cpu, fp32, ")))
      << table;
  EXPECT_EQ(assembled.err.find("training"), std::string::npos) << assembled.err;
  // The same rows as the table a whole run writes (here: a rerun that finds everything done).
  const auto whole = run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const auto assembled_rows = table_rows(table), whole_rows = table_rows(slurp(out / "results.md"));
  ASSERT_EQ(assembled_rows.size(), 3u) << table;
  for (const auto& [name, cells] : whole_rows)
    for (size_t i : {1, 3, 4, 5, 6, 7, 8}) EXPECT_EQ(assembled_rows.at(name).at(i), cells.at(i)) << name << " " << i;

  expect_one_seed_table(out, whole);
}

// One system's translations changed, and a damaged run.json, after a whole one-seed run.
void expect_rows_from_their_own_outputs(const fs::path& out) {
  const std::vector<std::string> report_only = {"/bin/bash",  kScript,   "--quick", "--out",
                                                out.string(), "--build", kBuildDir, "--report-only"};
  const auto before_cut = run(report_only);
  ASSERT_EQ(before_cut.exit_code, 0) << before_cut.err;
  const auto whole_rows = table_rows(slurp(out / "results.md"));
  // Each row's scores come from that system's own translations: one system's valid
  // translations are replaced by every other line of the references (the toy models score
  // near 0), and only its row moves, to what csan-score gives that file alone.
  const fs::path cut_hyp = out / "hyp" / "valid" / "CSAN-2D";
  const fs::path valid_ref = out / "raw" / "valid.tgt";
  std::string cut;
  const auto own = split(slurp(cut_hyp), '\n'), refs = split(slurp(valid_ref), '\n');
  ASSERT_EQ(own.size(), refs.size());
  for (size_t i = 0; i < own.size(); ++i) cut += (i % 2 ? own[i] : refs[i]) + "\n";
  std::ofstream(cut_hyp) << cut;
  const auto recut = run(report_only);
  ASSERT_EQ(recut.exit_code, 0) << recut.err;
  const auto recut_rows = table_rows(slurp(out / "results.md"));
  const auto alone = run({std::string(CSAN_BIN_DIR) + "/csan-score", valid_ref.string(), "-i", cut_hyp.string(), "-m",
                          "bleu", "chrf", "-w", "2", "-f", "json"});
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  std::vector<double> alone_scores;
  const std::regex score(R"("score": ([0-9.]+))");
  for (std::sregex_iterator m(alone.out.begin(), alone.out.end(), score), end; m != end; ++m)
    alone_scores.push_back(std::stod((*m)[1]));
  ASSERT_EQ(alone_scores.size(), 2u) << alone.out;
  for (const auto& [name, cells] : whole_rows)
    for (size_t i : {3, 4}) {
      const std::string& now = recut_rows.at(name).at(i);
      if (name != "CSAN-2D") {
        EXPECT_EQ(now, cells.at(i)) << name << " " << i;
      } else {
        EXPECT_NEAR(std::stod(now), alone_scores[i - 3], 0.0051) << i;
        EXPECT_NE(now, cells.at(i)) << i;
      }
    }

  // A damaged run.json: an error naming it, and the table already there is kept.
  const std::string before = slurp(out / "results.md");
  std::ofstream(out / "csan1d" / "run.json") << "{\"csan_version\": ";
  const auto damaged = run(report_only);
  EXPECT_NE(damaged.exit_code, 0);
  EXPECT_NE(damaged.err.find("results_table: error: csan1d/run.json:1: malformed JSON"), std::string::npos)
      << damaged.err;
  EXPECT_EQ(slurp(out / "results.md"), before);
}

TEST(CcnVsTransformer, MissingDataAndBadOptionsAreOneLineErrors) {
  const fs::path out = csan::testing::make_temp_dir("ccn_vs_transformer_nodata");
  const auto missing =
      run({"/bin/bash", kCcnScript, "--data", "/nonexistent/multi30k", "--out", out.string(), "--build", kBuildDir});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(is_one_line(missing.err)) << missing.err;
  EXPECT_NE(missing.err.find("ccn-vs-transformer: error: --data /nonexistent/multi30k: no train.en"), std::string::npos)
      << missing.err;
  EXPECT_FALSE(fs::exists(out / "data-bin"));
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--quik"}, {"--seed", "-1"}, {"--build"}}) {
    std::vector<std::string> argv = {"/bin/bash", kCcnScript};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = run(argv);
    EXPECT_NE(result.exit_code, 0) << args[0];
    EXPECT_TRUE(is_one_line(result.err)) << result.err;
    EXPECT_NE(result.err.find(args[0]), std::string::npos) << result.err;
  }
  const auto help = run({"/bin/bash", kCcnScript, "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--quick"), std::string::npos) << help.out;
}

}  // namespace

namespace {

// tools/gpu/experiments.sh, the lent GPU machine's driver, in its --quick check on this
// machine (CSAN_GPU_BUILD_DIR: the CPU build): the chosen comparisons and systems train
// side by side and come back as one archive of readable outputs, without checkpoints.
TEST(GpuExperimentsScript, QuickCheckPacksTheChosenRunsIntoOneArchive) {
  const fs::path out = csan::testing::make_temp_dir("gpu_experiments_out");
  const fs::path work = csan::testing::make_temp_dir("gpu_experiments_work");
  const std::string script = std::string(CSAN_SOURCE_DIR) + "/tools/gpu/experiments.sh";
  const std::vector<std::string> env = {"CSAN_GPU_QUICK=1", "CSAN_GPU_PRECISION=fp32",
                                        "CSAN_GPU_BUILD_DIR=" + kBuildDir, "CSAN_GPU_WORK=" + work.string(),
                                        "CSAN_GPU_RUNS=ccn:CCN locality:BLOCK"};
  const auto result = run({"/bin/bash", script, out.string()}, "", env);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("ccn-vs-transformer.sh --jobs 1 --precision fp32 --no-valid-bleu --systems CCN"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("locality-table1.sh --jobs 1 --precision fp32 --no-valid-bleu --systems BLOCK"),
            std::string::npos)
      << result.out;
  const auto listing = run({"/bin/tar", "tzf", (out / "experiments.tgz").string()});
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  for (const char* file : {"ccn/ccn/train.log", "ccn/ccn/metrics.jsonl", "ccn/ccn/run.json", "ccn/hyp/test/CCN",
                           "locality/block/metrics.jsonl", "locality/hyp/valid/BLOCK", "ccn.log", "locality.log"})
    EXPECT_NE(listing.out.find(std::string(file) + "\n"), std::string::npos) << file << "\n" << listing.out;
  EXPECT_EQ(listing.out.find(".pt"), std::string::npos) << listing.out;
  EXPECT_EQ(listing.out.find("ccn/transformer/"), std::string::npos) << listing.out;
  EXPECT_EQ(listing.out.find("data-bin"), std::string::npos) << listing.out;
  EXPECT_TRUE(fs::exists(work / "ccn" / "ccn" / "checkpoint_best.pt"));  // kept there for a second call
  // Validated without BLEU unless CSAN_GPU_VALID_BLEU=1 (it was most of a GPU run's time).
  EXPECT_EQ(slurp(work / "ccn" / "ccn" / "metrics.jsonl").find("\"bleu\""), std::string::npos);
  EXPECT_FALSE(fs::exists(out / "ccn-results.md"));  // a subset: no table

  const auto unknown = run({"/bin/bash", script, out.string()}, "", {"CSAN_GPU_RUNS=ccn tagger"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(is_one_line(unknown.err)) << unknown.err;
  EXPECT_NE(unknown.err.find("CSAN_GPU_RUNS: no comparison 'tagger'"), std::string::npos) << unknown.err;
}

}  // namespace

// --seeds 1,2 on the quick CSAN Table 2: each system trains once per seed (seed 1 where a
// one-seed run trains, seed 2 in DIR/seed2), and each row gives the mean ± sample standard
// deviation of the system's per-seed scores, recomputed here with csan-score from the
// per-seed translations; the p-values are Holm-adjusted across the two rows, from the
// unadjusted ones in parentheses, and never below a seed's paired bootstrap p.
namespace {

std::vector<double> scores_of(const fs::path& reference, const fs::path& hyp) {
  const auto result = run({std::string(CSAN_BIN_DIR) + "/csan-score", reference.string(), "-i", hyp.string(), "-m",
                           "bleu", "chrf", "-w", "4", "-f", "json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<double> scores;
  const std::regex score(R"("score": ([0-9.]+))");
  for (std::sregex_iterator m(result.out.begin(), result.out.end(), score), end; m != end; ++m)
    scores.push_back(std::stod((*m)[1]));
  EXPECT_EQ(scores.size(), 2u) << result.out;
  return scores;
}

std::string mean_and_sd(double a, double b) {
  const double mean = (a + b) / 2;
  const double sd = std::sqrt(((a - mean) * (a - mean) + (b - mean) * (b - mean)) / 1);
  char text[64];
  std::snprintf(text, sizeof text, "%.2f ± %.2f", mean, sd);
  return text;
}

// The largest paired-bootstrap p of SYSTEM's METRIC ("BLEU" or "chrF2") in a scores file.
double bootstrap_p(const fs::path& scores, const std::string& system, const std::string& metric) {
  const std::string text = slurp(scores);
  const size_t at = text.find("\"system\": \"" + system + "\"");
  EXPECT_NE(at, std::string::npos) << system;
  const size_t key = text.find("\"" + metric, at);
  std::smatch m;
  const std::string rest = text.substr(key, 400);
  EXPECT_TRUE(std::regex_search(rest, m, std::regex(R"("p_value": ([0-9.e-]+))"))) << rest;
  return std::stod(m[1]);
}

}  // namespace

// One run directory for the three parts (each system trains once per seed): --systems and
// --report-only with one seed, then --seeds 1,2 (only seed 2 trains), then the rows'
// provenance.
TEST(CsanTable2, SystemsSeedsAndReportOnlyOnOneRunDirectory) {
  const fs::path out = csan::testing::make_temp_dir("csan_table2");
  systems_then_report_only(out);
  if (HasFatalFailure()) return;
  const auto result =
      run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir, "--seeds", "1,2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string table = slurp(out / "results.md");
  EXPECT_NE(table.find("| System | Seeds | Parameters | Time per update | Valid BLEU |"), std::string::npos) << table;
  EXPECT_NE(table.find("Welch's t-test"), std::string::npos) << table;
  EXPECT_NE(table.find("seeds 1, 2"), std::string::npos) << table;
  EXPECT_EQ(table.find("different numbers of seeds"), std::string::npos) << table;
  const std::map<std::string, std::string> dirs = {
      {"Transformer", "transformer"}, {"CSAN-1D", "csan1d"}, {"CSAN-2D", "csan2d"}};
  const auto rows = table_rows(table);
  ASSERT_EQ(rows.size(), 3u) << table;
  std::vector<std::pair<double, double>> bleu_p;  // (unadjusted, adjusted) of the two rows
  for (const auto& [name, dir] : dirs) {
    ASSERT_TRUE(rows.count(name)) << table;
    const auto& cells = rows.at(name);
    ASSERT_EQ(cells.size(), 10u) << table;
    EXPECT_EQ(cells[1], "2");
    EXPECT_TRUE(fs::exists(out / dir / "seed2" / "checkpoint_best.pt")) << name;
    EXPECT_TRUE(fs::exists(out / dir / "checkpoint_best.pt")) << name;
    for (const auto& [column, split_name] : std::vector<std::pair<size_t, std::string>>{{4, "valid"}, {6, "test"}}) {
      const fs::path reference = out / "raw" / (split_name + ".tgt");
      const auto first = scores_of(reference, out / "hyp" / split_name / name);
      const auto second = scores_of(reference, out / "hyp" / "seed2" / split_name / name);
      ASSERT_EQ(first.size(), 2u);
      ASSERT_EQ(second.size(), 2u);
      EXPECT_EQ(cells[column], mean_and_sd(first[0], second[0])) << name << " " << split_name << " BLEU";
      EXPECT_EQ(cells[column + 1], mean_and_sd(first[1], second[1])) << name << " " << split_name << " chrF2";
    }
    if (name == "Transformer") {
      EXPECT_EQ(cells[8], "–");
      continue;
    }
    std::smatch m;
    ASSERT_TRUE(std::regex_match(cells[8], m, std::regex(R"(([01]\.[0-9]{3})\*? \(([01]\.[0-9]{3})\))"))) << cells[8];
    const double adjusted = std::stod(m[1]), raw = std::stod(m[2]);
    bleu_p.emplace_back(raw, adjusted);
    // The intersection-union test: never below either seed's paired bootstrap.
    for (const fs::path& scores : {out / "test-scores.json", out / "test-scores.seed2.json"})
      EXPECT_GE(raw + 0.0005, bootstrap_p(scores, name, "BLEU")) << name;
  }
  // Holm with two rows: the smaller p doubled, the larger kept but never below it.
  ASSERT_EQ(bleu_p.size(), 2u);
  std::sort(bleu_p.begin(), bleu_p.end());
  const double first = std::min(1.0, 2 * bleu_p[0].first);
  EXPECT_NEAR(bleu_p[0].second, first, 0.0011);
  EXPECT_NEAR(bleu_p[1].second, std::max(first, bleu_p[1].first), 0.0011);
  EXPECT_LE(bleu_p[0].second, bleu_p[1].second + 1e-9);

  // --report-only with seed 2 of CSAN-1D gone: the table says the seeds differ.
  fs::remove(out / "hyp" / "seed2" / "test" / "CSAN-1D");
  const auto partial = run({"/bin/bash", kScript, "--quick", "--out", out.string(), "--build", kBuildDir, "--seeds",
                            "1,2", "--report-only"});
  ASSERT_EQ(partial.exit_code, 0) << partial.err;
  const std::string partial_table = slurp(out / "results.md");
  EXPECT_NE(partial_table.find("different numbers of seeds"), std::string::npos) << partial_table;
  EXPECT_EQ(table_rows(partial_table).at("CSAN-1D").at(1), "1");
  EXPECT_EQ(table_rows(partial_table).at("CSAN-1D").at(8), "–");  // one seed: no test over seeds

  expect_rows_from_their_own_outputs(out);
}
