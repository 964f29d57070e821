// csan-score end to end against sacreBLEU 2.6.0's recorded runs
// (../shared/vectors/sacrebleu/expected.json). Every "cli" run is replayed with the case
// directory as working directory, its environment and its stdin file; the exit code and
// stdout must match exactly (long sentence-level runs: line count and SHA-256 of stdout).
//
// stderr:
//  * matched exactly: every run where sacreBLEU prints its own message and exit code
//    (errors/* with exit 1 or 17, e.g. mismatch, mismatch_quiet, tsv_missing_field, no_refs,
//    paired_same_file_twice), and the runs with an empty stderr;
//  * our one-line replacement of a Python traceback (errors/bad_utf8, errors/missing_file):
//    exit 1 and one line naming the file (and, for invalid UTF-8, the line);
//  * argparse usage errors (errors/unknown_tokenizer, unknown_metric, bs_and_ar): exit 2
//    and the same "error: argument ..." text after our own usage line;
//  * informational log lines ("sacreBLEU: Found 4 systems." ...) are not compared.
// No run is skipped: every visible vector applies to local files.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "sha256.h"
#include "tests/support/text_files.h"

namespace {

using csan::testing::run;
using csan::testing::slurp;
using nlohmann::json;

std::string vectors_dir() { return csan::testing::shared_dir() + "/vectors/sacrebleu"; }

const json& expected() {
  static const json data = [] {
    std::ifstream in(vectors_dir() + "/expected.json");
    return json::parse(in);
  }();
  return data;
}

struct CliCase {
  std::string case_name;
  json run;
};

void PrintTo(const CliCase& c, std::ostream* os) { *os << c.run["id"].get<std::string>(); }

std::vector<CliCase> all_cli_runs() {
  std::vector<CliCase> runs;
  for (const auto& [name, data] : expected()["cases"].items())
    for (const auto& r : data["cli"]) runs.push_back({name, r});
  return runs;
}

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

csan::testing::RunResult replay(const CliCase& c, const std::vector<std::string>& extra_args = {}) {
  const std::string dir = vectors_dir() + "/cases/" + c.case_name;
  std::vector<std::string> argv{csan::testing::bin("csan-score")};
  for (const auto& a : c.run["args"]) argv.push_back(a.get<std::string>());
  for (const auto& a : extra_args) argv.push_back(a);
  std::vector<std::string> env;
  for (const auto& [k, v] : c.run["env"].items()) env.push_back(k + "=" + v.get<std::string>());
  const std::string stdin_data = c.run["stdin"].is_null() ? "" : slurp(dir + "/" + c.run["stdin"].get<std::string>());
  return run(argv, stdin_data, env, dir);
}

class SacrebleuCli : public ::testing::TestWithParam<CliCase> {};

TEST_P(SacrebleuCli, ReproducesRecordedRun) {
  const CliCase& c = GetParam();
  const json& r = c.run;
  const auto result = replay(c);
  const std::string id = r["id"].get<std::string>();
  EXPECT_EQ(result.exit_code, r["exit_code"].get<int>()) << id << "\nstderr: " << result.err;

  if (r.contains("stdout")) {
    EXPECT_EQ(result.out, r["stdout"].get<std::string>()) << id;
  } else {
    const std::string head = r["stdout_head"].get<std::string>();
    EXPECT_EQ(result.out.substr(0, head.size()), head) << id;
    EXPECT_EQ(count_lines(result.out), r["stdout_lines"].get<std::size_t>()) << id;
    EXPECT_EQ(csan::testing::sha256_hex(result.out), r["stdout_sha256"].get<std::string>()) << id;
  }

  const int code = r["exit_code"].get<int>();
  if (r.contains("stderr_last_line")) {
    // A Python traceback in sacreBLEU; one line naming the file here.
    EXPECT_EQ(count_lines(result.err), 1u) << id << ": " << result.err;
    const std::string last = r["stderr_last_line"].get<std::string>();
    if (last.find("UnicodeDecodeError") != std::string::npos) {
      EXPECT_NE(result.err.find("bad_utf8.txt:"), std::string::npos) << result.err;
      EXPECT_NE(result.err.find("invalid UTF-8"), std::string::npos) << result.err;
    } else {
      EXPECT_NE(result.err.find("does_not_exist.txt"), std::string::npos) << result.err;
    }
  } else if (code == 2) {
    const std::string err = r["stderr"].get<std::string>();
    const std::string message = err.substr(err.find(": error: ") + 2);
    EXPECT_NE(result.err.find(message), std::string::npos) << id << ": " << result.err;
  } else if (code != 0 || r["stderr"].get<std::string>().empty()) {
    EXPECT_EQ(result.err, r["stderr"].get<std::string>()) << id;
  }
}

std::string test_name(const ::testing::TestParamInfo<CliCase>& info) {
  std::string name = info.param.run["id"].get<std::string>();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Vectors, SacrebleuCli, ::testing::ValuesIn(all_cli_runs()), test_name);

// api_confidence: the -ci bootstrap mean and CI at full precision. With -w 20 the JSON
// holds float(f"{x:.20f}"), which is x itself (20 decimals are more than 17 digits).
TEST(SacrebleuConfidence, FullPrecisionMeansAndIntervals) {
  std::size_t checked = 0;
  for (const auto& [name, data] : expected()["cases"].items()) {
    for (const auto& entry : data["api_confidence"]) {
      CliCase c{name, json{{"args", entry["cli_args"]}, {"env", json::object()}, {"stdin", nullptr}}};
      const auto result = replay(c, {"-w", "20"});
      ASSERT_EQ(result.exit_code, 0) << result.err;
      const json got = json::parse(result.out);
      const std::string what = name + "/" + entry["config"].get<std::string>();
      EXPECT_EQ(got["score"].get<double>(), entry["score"].get<double>()) << what;
      EXPECT_EQ(got["confidence_mean"].get<double>(), entry["bootstrap_mean"].get<double>()) << what;
      EXPECT_EQ(got["confidence_var"].get<double>(), entry["bootstrap_ci"].get<double>()) << what;
      EXPECT_EQ(got["signature"].get<std::string>(), entry["signature"].get<std::string>()) << what;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6u);
}

const json& recorded_run(const std::string& case_name, const std::string& id) {
  for (const auto& r : expected()["cases"][case_name]["cli"])
    if (r["id"] == id) return r;
  throw std::runtime_error("no recorded run " + id);
}

CliCase with_env(const std::string& case_name, const std::string& id, const json& env) {
  CliCase c{case_name, recorded_run(case_name, id)};
  c.run["env"] = env;
  return c;
}

// Behaviour around the recorded runs: environment variables, stdin newlines, bad input.
TEST(ScoreCli, SacrebleuFormatOverridesTheFormatOption) {
  const auto result = replay(with_env("de500", "de500/sys_b.de/bleu_chrf_ter_json", {{"SACREBLEU_FORMAT", "TEXT"}}));
  EXPECT_EQ(result.out, recorded_run("de500", "de500/sys_b.de/bleu_chrf_ter_text")["stdout"].get<std::string>());
}

TEST(ScoreCli, ExplicitDefaultSeedChangesNothing) {
  const auto& recorded = recorded_run("tiny", "tiny/paired/one_line_ar");
  const auto result = replay(with_env("tiny", "tiny/paired/one_line_ar", {{"SACREBLEU_SEED", "12345"}}));
  EXPECT_EQ(result.out, recorded["stdout"].get<std::string>());
}

TEST(ScoreCli, SeedNoneIsUnseededAndSigned) {
  const auto result = replay(with_env("de500", "de500/sys_b.de/ci_text_w2_n200", {{"SACREBLEU_SEED", "None"}}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("|bs:200|seed:none|"), std::string::npos) << result.out;
}

TEST(ScoreCli, AnotherSeedGivesOtherResamples) {
  const std::string id = "de500/sys_b.de/ci_text_w2_n200";
  const auto seeded = replay(with_env("de500", id, {{"SACREBLEU_SEED", "7"}}));
  ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
  EXPECT_NE(seeded.out.find("|bs:200|seed:7|"), std::string::npos) << seeded.out;
  EXPECT_EQ(seeded.out, replay(with_env("de500", id, {{"SACREBLEU_SEED", "7"}})).out);  // deterministic
  EXPECT_NE(seeded.out, recorded_run("de500", id)["stdout"].get<std::string>());
}

TEST(ScoreCli, SeedIsOnlyReadWhenResampling) {
  const json& recorded = recorded_run("de500", "de500/sys_b.de/bleu/json");
  const auto result = replay(with_env("de500", "de500/sys_b.de/bleu/json", {{"SACREBLEU_SEED", "seven"}}));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, recorded["stdout"].get<std::string>());
}

TEST(ScoreCli, InvalidSeedIsOneLineError) {
  const auto result = replay(with_env("de500", "de500/sys_b.de/ci_text_w2_n200", {{"SACREBLEU_SEED", "seven"}}));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(count_lines(result.err), 1u) << result.err;
  EXPECT_NE(result.err.find("SACREBLEU_SEED"), std::string::npos) << result.err;
}

TEST(ScoreCli, StdinUsesUniversalNewlines) {
  const json& recorded = recorded_run("de500", "de500/stdin/multi_json");
  const std::string dir = vectors_dir() + "/cases/de500";
  std::string crlf;
  for (char c : slurp(dir + "/systems.tsv")) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const auto result = run({csan::testing::bin("csan-score"), "ref.de", "-m", "bleu", "chrf"}, crlf, {}, dir);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, recorded["stdout"].get<std::string>());
}

TEST(ScoreCli, InvalidUtf8OnStdinNamesTheLine) {
  const std::string dir = vectors_dir() + "/cases/errors";
  const auto result = run({csan::testing::bin("csan-score"), "ref.txt"}, "ok\n\xff\n", {}, dir);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(count_lines(result.err), 1u) << result.err;
  EXPECT_NE(result.err.find("<stdin>:2"), std::string::npos) << result.err;
}

TEST(ScoreCli, StdinFieldCountMismatchExits17) {
  const std::string dir = vectors_dir() + "/cases/errors";
  const auto result = run({csan::testing::bin("csan-score"), "ref.txt"}, "a\tb\nc\n", {}, dir);
  EXPECT_EQ(result.exit_code, 17);
  EXPECT_EQ(result.err,
            "sacreBLEU: FATAL: the number of tab-delimited fields in the input stream differ across lines.\n");
}

TEST(ScoreCli, ArgparseStyleArguments) {
  const std::string dir = vectors_dir() + "/cases/de500";
  const std::string intl = recorded_run("de500", "de500/sys_b.de/bleu_intl/json")["stdout"].get<std::string>();
  const std::string bin = csan::testing::bin("csan-score");
  EXPECT_EQ(run({bin, "ref.de", "-i", "sys_b.de", "-m", "bleu", "-tok=intl"}, "", {}, dir).out, intl);
  EXPECT_EQ(run({bin, "ref.de", "-i", "sys_b.de", "--metrics=bleu", "--tokenize", "intl"}, "", {}, dir).out, intl);
  // The last occurrence of an option wins, as with argparse.
  EXPECT_EQ(run({bin, "ref.de", "-i", "sys_a.de", "-m", "chrf", "-tok", "13a", "-i", "sys_b.de", "-m", "bleu", "-tok",
                 "intl"},
                "", {}, dir)
                .out,
            intl);
  const std::string w3 = recorded_run("de500", "de500/sys_b.de/text_w3")["stdout"].get<std::string>();
  EXPECT_EQ(run({bin, "ref.de", "-i", "sys_b.de", "-m", "bleu", "chrf", "ter", "-f", "text", "-w3"}, "", {}, dir).out,
            w3);
}

TEST(ScoreCli, WarnsAboutTokenizedPeriodsUnlessForced) {
  const std::string dir = csan::testing::make_temp_dir("score_tokenized");
  {
    std::ofstream out(dir + "/tok.txt");
    for (int i = 0; i < 100; ++i) out << "this is line number " << i << " .\n";
  }
  const std::string bin = csan::testing::bin("csan-score");
  const auto warned = run({bin, "tok.txt", "-i", "tok.txt", "-b"}, "", {}, dir);
  EXPECT_EQ(warned.out, "100.0\n");
  EXPECT_NE(warned.err.find("That's 100 lines that end in a tokenized period ('.')"), std::string::npos) << warned.err;
  const auto forced = run({bin, "tok.txt", "-i", "tok.txt", "-b", "--force"}, "", {}, dir);
  EXPECT_EQ(forced.out, "100.0\n");
  EXPECT_EQ(forced.err, "");
  EXPECT_EQ(run({bin, "tok.txt", "-i", "tok.txt", "-sl", "-b"}, "", {}, dir).err, "");
}

TEST(ScoreCli, ThreadCountDoesNotChangeResults) {
  const json& recorded = recorded_run("de500", "de500/paired_bs/json");
  CliCase c{"de500", recorded};
  EXPECT_EQ(replay(c, {"-j", "3"}).out, recorded["stdout"].get<std::string>());
}

}  // namespace
