// How many CPU threads csan-train and csan-generate compute with: --threads N when given,
// else OMP_NUM_THREADS, else every CPU the process may run on. (Debian's LibTorch alone
// takes one thread on the 2-core machines this project runs on.) ctest gives every test
// OMP_NUM_THREADS=1; these tests remove it where they test the default.
#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_runner.h"
#include "toolkit/core/cpu_threads.h"

using namespace csan::testing;

namespace {

const std::vector<std::string> kNoThreadVariables = {"OMP_NUM_THREADS", "MKL_NUM_THREADS"};  // putenv: unset

std::string plural(unsigned n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); }

class Threads : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(make_temp_dir("threads"));
    data_ = new std::string(make_toy_data_in(*dir_, 100, 10, 3));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete data_;
  }

  RunResult train(const std::string& name, std::vector<std::string> extra, const std::vector<std::string>& env) {
    std::vector<std::string> args = {bin("csan-train"),
                                     std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
                                     "--data",
                                     *data_,
                                     "--save-dir",
                                     *dir_ + "/" + name,
                                     "--max-update",
                                     "1",
                                     "--max-tokens",
                                     "256",
                                     "--cpu"};  // the thread count is the CPU's, also on a GPU machine
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args, "", env);
  }
  int recorded_threads(const std::string& name) {
    std::ifstream in(*dir_ + "/" + name + "/run.json");
    return nlohmann::json::parse(in)["threads"].get<int>();
  }
  // The thread count in csan-generate's summary line.
  int generate_threads(const RunResult& r) {
    std::smatch m;
    if (!std::regex_search(
            r.out, m, std::regex(R"(Translated \d+ sentences .*, (\d+) CPU threads?(?:, \d+ batches at a time)?\)\n)")))
      return -1;
    return std::stoi(m[1]);
  }
  RunResult generate(std::vector<std::string> extra, const std::vector<std::string>& env) {
    std::vector<std::string> args = {bin("csan-generate"),
                                     "--cpu",
                                     "--path",
                                     *dir_ + "/model/checkpoint_last.pt",
                                     "--data",
                                     *data_,
                                     "--gen-subset",
                                     "valid",
                                     "--beam",
                                     "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args, "", env);
  }

  static std::string* dir_;
  static std::string* data_;
};
std::string* Threads::dir_ = nullptr;
std::string* Threads::data_ = nullptr;

TEST_F(Threads, TrainingUsesEveryUsableCpuUnlessToldOtherwise) {
  const unsigned usable = csan::core::usable_cpu_count();
  RunResult r = train("default", {}, kNoThreadVariables);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(recorded_threads("default"), static_cast<int>(usable));
  EXPECT_NE(r.err.find("on cpu, " + plural(usable) + " (usable CPUs)"), std::string::npos) << r.err;

  r = train("omp", {}, {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(recorded_threads("omp"), 1);
  EXPECT_NE(r.err.find("on cpu, 1 thread (OMP_NUM_THREADS)"), std::string::npos) << r.err;

  r = train("flag", {"--threads", "3"}, {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(recorded_threads("flag"), 3) << "--threads wins over OMP_NUM_THREADS";

  r = train("negative", {"--threads", "-1"}, {});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("common.threads"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// A process bound to one CPU (taskset, a Slurm binding) computes on one thread.
TEST_F(Threads, TheAffinityMaskBoundsTheDefault) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);  // the child inherits it
  RunResult r = train("pinned", {}, kNoThreadVariables);
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(recorded_threads("pinned"), 1);
}

TEST_F(Threads, GenerationUsesEveryUsableCpuUnlessToldOtherwise) {
  RunResult trained = train("model", {}, {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const int usable = static_cast<int>(csan::core::usable_cpu_count());
  RunResult r = generate({}, kNoThreadVariables);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(generate_threads(r), usable) << r.out;

  r = generate({}, {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(generate_threads(r), 1) << r.out;

  r = generate({"--threads", "2"}, {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(generate_threads(r), 2) << r.out;

  r = generate({"--threads", "-2"}, {});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--threads -2"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
