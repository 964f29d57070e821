// csan-score's options at the edges sacreBLEU 2.6.0 defines: values it accepts keep its
// meaning (the same output), values it crashes on are one-line errors naming the option.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/scoring/score_run.h"

namespace csan::scoring {
namespace {

namespace fs = std::filesystem;

struct Files {
  std::string ref, base, sys;
};

const Files& files() {
  static const Files f = [] {
    fs::path dir = fs::temp_directory_path() / ("csan_score_limits_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    Files out{(dir / "ref").string(), (dir / "base").string(), (dir / "sys").string()};
    write_file_atomically(out.ref, "the cat sat on the mat\na dog barked twice\nit rained all day long\n");
    write_file_atomically(out.base, "the cat sat on a mat\na dog barked\nit rained all day\n");
    write_file_atomically(out.sys, "a cat sat on the mat\nthe dog barked twice\nrain fell all day long\n");
    return out;
  }();
  return f;
}

struct Result {
  int status;
  std::string out, err;
};

Result score(ScoreOptions options) {
  if (options.refs.empty()) options.refs = {files().ref};
  if (!options.inputs) options.inputs = std::vector<std::string>{files().base};
  options.quiet = true;
  std::istringstream in;
  std::ostringstream out, err;
  ScoreEnvironment env;
  const int status = score_run(options, in, out, err, env);
  return {status, out.str(), err.str()};
}

std::string error_of(const ScoreOptions& options) {
  try {
    score(options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

ScoreOptions paired(bool bootstrap) {
  ScoreOptions o;
  o.inputs = std::vector<std::string>{files().base, files().sys};
  (bootstrap ? o.paired_bs : o.paired_ar) = true;
  o.format = "text";
  return o;
}

// sacreBLEU passes -j to multiprocessing.Pool, which raises on a negative count.
TEST(ScoreLimits, NegativeJobsInPairedTestsNameTheOption) {
  ScoreOptions o = paired(true);
  o.paired_jobs = -3;
  EXPECT_EQ(error_of(o),
            "--paired-jobs/-j: expected 0 (one worker per system) or a positive number of threads, got -3");
  // Without a paired test sacreBLEU never reads -j: still accepted.
  ScoreOptions single;
  single.paired_jobs = -3;
  EXPECT_EQ(score(single).status, 0);
}

// The results table and the signature block of a paired-test text output.
std::string table_and_signatures(const std::string& out) {
  return out.substr(0, out.find("\n\n")) + out.substr(out.find("Metric signatures"));
}

// sacreBLEU's PairedTest reads n_samples <= 0 as its default (1000 resamples / 10000
// trials); only its explanation quotes the option as given.
TEST(ScoreLimits, ZeroOrNegativePairedCountsMeanTheDefault) {
  for (bool bootstrap : {true, false}) {
    const Result expected = score(paired(bootstrap));
    for (int n : {0, -5}) {
      ScoreOptions o = paired(bootstrap);
      (bootstrap ? o.paired_bs_n : o.paired_ar_n) = n;
      const Result got = score(o);
      EXPECT_EQ(got.status, 0);
      EXPECT_EQ(table_and_signatures(got.out), table_and_signatures(expected.out));
      const std::string quoted = "with " + std::to_string(n) + (bootstrap ? " resampling trials" : " trials");
      EXPECT_NE(got.out.find(quoted), std::string::npos) << got.out;
    }
  }
}

// corpus_score(n_bootstrap=N) only resamples when N > 1: -ci -cin 0 is a plain score.
TEST(ScoreLimits, ConfidenceWithOneOrFewerResamplesIsAPlainScore) {
  ScoreOptions plain;
  for (int n : {1, 0, -4}) {
    ScoreOptions o;
    o.confidence = true;
    o.confidence_n = n;
    EXPECT_EQ(score(o).out, score(plain).out) << n;
  }
}

TEST(ScoreLimits, ResampleCountsAboveTheCapAreErrors) {
  ScoreOptions ci;
  ci.confidence = true;
  ci.confidence_n = 2000000000;
  EXPECT_EQ(error_of(ci), "--confidence-n/-cin: at most 10000000 (got 2000000000)");
  ScoreOptions bs = paired(true);
  bs.paired_bs_n = 10000001;
  EXPECT_EQ(error_of(bs), "--paired-bs-n/-pbsn: at most 10000000 (got 10000001)");
  ScoreOptions ar = paired(false);
  ar.paired_ar_n = 2147483647;
  EXPECT_EQ(error_of(ar), "--paired-ar-n/-parn: at most 10000000 (got 2147483647)");
  // A count that is not used is not checked (sacreBLEU ignores -cin without -ci).
  ScoreOptions unused;
  unused.confidence_n = 2000000000;
  EXPECT_EQ(score(unused).status, 0);
}

// sacreBLEU squares beta (an int): -1 scores as beta 1 under the name chrF-1, and a large
// beta is an exact integer there (squaring it in int overflowed here).
TEST(ScoreLimits, ChrfBetaIsSquaredLikePython) {
  auto chrf = [](int beta) {
    ScoreOptions o;
    o.metrics = {"chrf"};
    o.chrf.beta = beta;
    o.score_only = true;
    o.width = 6;
    return score(o).out;
  };
  EXPECT_EQ(chrf(-1), chrf(1));
  ScoreOptions named;
  named.metrics = {"chrf"};
  named.chrf.beta = -1;
  EXPECT_NE(score(named).out.find("\"name\": \"chrF-1\""), std::string::npos);
  // Large betas weigh recall only. 65536^2 = 2^32 wrapped to 0 in an int, which made
  // chrF the precision instead.
  EXPECT_EQ(chrf(65536), chrf(100000));
  EXPECT_NE(chrf(65536), chrf(0));  // beta 0: the precision (it differs from the recall here)
}

}  // namespace
}  // namespace csan::scoring
