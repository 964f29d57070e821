// Exact resume, end to end through csan-train: a run stopped after K updates (by
// --max-update, or by SIGTERM at an arbitrary moment) and resumed must end with weights
// bit-identical to an uninterrupted run. Uses the built executables to make the data.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/text_files.h"
#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/tasks/recipe.h"

namespace fs = std::filesystem;
using csan::testing::slurp;

namespace csan::training {
namespace {

using checkpoint::CheckpointReader;

pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
  pid_t pid = ::fork();
  if (pid == 0) {
    FILE* out = std::fopen(log.c_str(), "w");
    if (out) {
      ::dup2(fileno(out), 1);
      ::dup2(fileno(out), 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::_Exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run(const std::vector<std::string>& argv, const std::string& log) { return wait_exit(spawn(argv, log)); }

class Resume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = (fs::temp_directory_path() / ("csan-resume-test-" + std::to_string(::getpid()))).string();
    fs::create_directories(root_);
    ASSERT_EQ(run({std::string(CSAN_TOOLS_DIR) + "/csan-toy-corpus", "--out-dir", root_ + "/raw", "--train", "150",
                   "--valid", "40", "--test", "10", "--seed", "3"},
                  root_ + "/toy.log"),
              0)
        << slurp(root_ + "/toy.log");
    ASSERT_EQ(run({std::string(CSAN_BIN_DIR) + "/csan-preprocess", "--source-lang", "src", "--target-lang", "tgt",
                   "--trainpref", root_ + "/raw/train", "--validpref", root_ + "/raw/valid", "--destdir",
                   root_ + "/data", "--joined-dictionary", "--spm-vocab-size", "200", "--workers", "1"},
                  root_ + "/pre.log"),
              0)
        << slurp(root_ + "/pre.log");
  }
  static void TearDownTestSuite() { remove_tree(root_); }

  // Small batches so that an epoch has many updates and stops fall mid-epoch; dropout
  // on, so the RNG state matters.
  std::vector<std::string> train_command(const std::string& save_dir, int64_t max_update) {
    return {std::string(CSAN_BIN_DIR) + "/csan-train",
            std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
            "--data",
            root_ + "/data",
            "--save-dir",
            save_dir,
            "--max-update",
            std::to_string(max_update),
            "--max-tokens",
            "256",
            "--log-interval",
            "1",
            "--seed",
            "5",
            "--set",
            "optimization.max_epoch=0",
            "--set",
            "lr_scheduler.warmup_updates=10",
            "--set",
            "dataset.validate_interval_updates=7",
            "--set",
            "checkpoint.save_interval_updates=4"};
  }

  static std::string root_;
};
std::string Resume::root_;

// The named parameters and buffers of the model in a checkpoint.
std::map<std::string, torch::Tensor> weights(const std::string& checkpoint) {
  auto loaded = loading::load_model(checkpoint, tasks::describe_model);
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : loaded.model->named_parameters()) out[p.key()] = p.value().detach().clone();
  return out;
}

void expect_bit_identical(const std::string& a, const std::string& b) {
  auto wa = weights(a), wb = weights(b);
  ASSERT_EQ(wa.size(), wb.size());
  ASSERT_FALSE(wa.empty());
  for (const auto& [name, tensor] : wa) {
    ASSERT_TRUE(wb.count(name)) << name;
    EXPECT_TRUE(torch::equal(tensor, wb[name])) << name << " differs between " << a << " and " << b;
  }
}

TEST_F(Resume, StoppedByMaxUpdateAndResumedEndsBitIdentical) {
  const std::string full = root_ + "/full", split = root_ + "/split";
  ASSERT_EQ(run(train_command(full, 30), root_ + "/full.log"), 0) << slurp(root_ + "/full.log");
  // 13: mid-epoch, between interval checkpoints (4) and validations (7).
  ASSERT_EQ(run(train_command(split, 13), root_ + "/split1.log"), 0) << slurp(root_ + "/split1.log");
  EXPECT_EQ(CheckpointReader(split + "/checkpoint_last.pt").progress().num_updates, 13);
  // The run resumes from what csan-train writes: format 3 (safetensors, state by name).
  EXPECT_EQ(CheckpointReader(split + "/checkpoint_last.pt").format_version(), 3);
  ASSERT_EQ(run(train_command(split, 30), root_ + "/split2.log"), 0) << slurp(root_ + "/split2.log");
  EXPECT_NE(slurp(root_ + "/split2.log").find("resumed from"), std::string::npos);
  EXPECT_EQ(CheckpointReader(split + "/checkpoint_last.pt").progress().num_updates, 30);
  expect_bit_identical(full + "/checkpoint_last.pt", split + "/checkpoint_last.pt");
  // The run crossed an epoch boundary too (150 pairs make ~12 batches of 256 tokens).
  EXPECT_GT(CheckpointReader(full + "/checkpoint_last.pt").progress().epoch, 1);
  // Interval checkpoints (every 4 updates) exist beside the epoch ones.
  int interval_checkpoints = 0;
  for (const auto& entry : fs::directory_iterator(full))
    if (entry.path().filename().string().find("_28.pt") != std::string::npos) ++interval_checkpoints;
  EXPECT_EQ(interval_checkpoints, 1);
  // Against a run that truly differs (another seed), the comparison fails: the check can fail.
  auto other = train_command(root_ + "/other", 30);
  other[other.size() - 9] = "6";  // --seed value
  ASSERT_EQ(other[other.size() - 10], "--seed");
  ASSERT_EQ(run(other, root_ + "/other.log"), 0);
  auto wa = weights(full + "/checkpoint_last.pt"), wb = weights(root_ + "/other/checkpoint_last.pt");
  bool all_equal = true;
  for (const auto& [name, tensor] : wa) all_equal = all_equal && torch::equal(tensor, wb[name]);
  EXPECT_FALSE(all_equal);
}

TEST_F(Resume, SigtermSavesAndTheResumedRunEndsBitIdentical) {
  const std::string full = root_ + "/full-sig", interrupted = root_ + "/interrupted";
  ASSERT_EQ(run(train_command(full, 40), root_ + "/full-sig.log"), 0) << slurp(root_ + "/full-sig.log");
  // A run that would go on for long; SIGTERM once a few updates are logged.
  const std::string log = root_ + "/sig1.log";
  pid_t pid = spawn(train_command(interrupted, 100000), log);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && slurp(log).find("update 3 ") == std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(pid), 128 + SIGTERM) << slurp(log);
  EXPECT_NE(slurp(log).find("stopped by SIGTERM"), std::string::npos) << slurp(log);
  const int64_t stopped_at = CheckpointReader(interrupted + "/checkpoint_last.pt").progress().num_updates;
  EXPECT_GE(stopped_at, 3);
  ASSERT_LT(stopped_at, 40) << "the run was not stopped early enough to test resuming";
  ASSERT_EQ(run(train_command(interrupted, 40), root_ + "/sig2.log"), 0) << slurp(root_ + "/sig2.log");
  expect_bit_identical(full + "/checkpoint_last.pt", interrupted + "/checkpoint_last.pt");
}

// CCN draws its input corruption (two tokens swapped per sentence and branch) from the
// seeded generator the checkpoint stores: a resumed CCN run stays bit-identical too, and
// differs from a run with other swaps.
TEST_F(Resume, CcnWithInputCorruptionResumesBitIdentical) {
  auto ccn = [&](const std::string& save_dir, int64_t max_update, const std::string& swap) {
    auto command = train_command(save_dir, max_update);
    command.insert(command.end(), {"--arch", "ccn_tiny", "--set", "model.ccn.swap_probability=" + swap});
    return command;
  };
  const std::string full = root_ + "/ccn-full", split = root_ + "/ccn-split";
  ASSERT_EQ(run(ccn(full, 16, "0.5"), root_ + "/ccn-full.log"), 0) << slurp(root_ + "/ccn-full.log");
  ASSERT_EQ(run(ccn(split, 9, "0.5"), root_ + "/ccn-split1.log"), 0) << slurp(root_ + "/ccn-split1.log");
  ASSERT_EQ(run(ccn(split, 16, "0.5"), root_ + "/ccn-split2.log"), 0) << slurp(root_ + "/ccn-split2.log");
  EXPECT_NE(slurp(root_ + "/ccn-split2.log").find("resumed from"), std::string::npos);
  expect_bit_identical(full + "/checkpoint_last.pt", split + "/checkpoint_last.pt");
  // The corruption is real: without it the same run ends elsewhere.
  ASSERT_EQ(run(ccn(root_ + "/ccn-clean", 16, "0.0"), root_ + "/ccn-clean.log"), 0);
  auto wa = weights(full + "/checkpoint_last.pt"), wb = weights(root_ + "/ccn-clean/checkpoint_last.pt");
  bool all_equal = true;
  for (const auto& [name, tensor] : wa) all_equal = all_equal && torch::equal(tensor, wb[name]);
  EXPECT_FALSE(all_equal);
}

// An EMA run end to end: each update's checkpoint holds the EMA of fairseq's formula over
// the raw weights of the updates so far, a resumed run ends with weights and EMA
// bit-identical to the uninterrupted one, and csan-generate --use-ema decodes with the
// EMA: otherwise than with the raw weights, as a checkpoint whose weights are the EMA.
TEST_F(Resume, EmaRunFollowsTheFormulaResumesExactlyAndGeneratesWithIt) {
  // Validation at update 3 too: with --validate-with-ema (the full run) the EMA weights
  // are swapped in and the raw ones back, which must leave the training as it was.
  auto ema_run = [&](const std::string& save_dir, int64_t max_update, bool validate_with_ema = false) {
    auto command = train_command(save_dir, max_update);
    command.insert(command.end(),
                   {"--store-ema", "--ema-decay", "0.75", "--ema-start-update", "2", "--set",
                    "checkpoint.save_interval_updates=1", "--set", "dataset.validate_interval_updates=3"});
    if (validate_with_ema) command.push_back("--validate-with-ema");
    return command;
  };
  const std::string full = root_ + "/ema-full", split = root_ + "/ema-split";
  ASSERT_EQ(run(ema_run(full, 6, true), root_ + "/ema-full.log"), 0) << slurp(root_ + "/ema-full.log");
  auto ema_of = [](const std::string& checkpoint) {
    CheckpointReader reader(checkpoint);
    std::map<std::string, torch::Tensor> out;
    for (const auto& key : reader.section("ema").keys()) out[key] = reader.section("ema").read(key);
    return out;
  };
  auto at_update = [&](int64_t n) {
    for (const auto& entry : fs::directory_iterator(full))
      if (entry.path().filename().string().find("_" + std::to_string(n) + ".pt") != std::string::npos)
        return entry.path().string();
    return full + "/checkpoint_last.pt";  // the last update's
  };
  std::map<std::string, torch::Tensor> expected;
  for (int64_t n = 1; n <= 6; ++n) {
    const auto raw = weights(at_update(n));
    const auto ema = ema_of(at_update(n));
    ASSERT_GE(ema.size(), 10u) << n;  // every parameter (a tied one under one name)
    for (const auto& [name, value] : ema) {
      ASSERT_TRUE(raw.count(name)) << name;
      if (n < 2)
        expected[name] = raw.at(name).clone();
      else
        expected[name].mul_(0.75).add_(raw.at(name), 0.25);
      EXPECT_TRUE(torch::equal(value, expected[name])) << name << " after update " << n;
    }
  }

  ASSERT_EQ(run(ema_run(split, 4), root_ + "/ema-split1.log"), 0) << slurp(root_ + "/ema-split1.log");
  ASSERT_EQ(run(ema_run(split, 6), root_ + "/ema-split2.log"), 0) << slurp(root_ + "/ema-split2.log");
  expect_bit_identical(full + "/checkpoint_last.pt", split + "/checkpoint_last.pt");
  const auto full_ema = ema_of(full + "/checkpoint_last.pt"), split_ema = ema_of(split + "/checkpoint_last.pt");
  for (const auto& [name, value] : full_ema) EXPECT_TRUE(torch::equal(value, split_ema.at(name))) << name;
  // The same weights validated: the EMA's loss in the full run, the raw weights' in the split one.
  auto valid_loss_at_3 = [](const std::string& save_dir) {
    std::istringstream records(slurp(save_dir + "/metrics.jsonl"));
    std::string line;
    while (std::getline(records, line))
      if (line.find("\"kind\": \"valid\"") != std::string::npos && line.find("\"update\": 3,") != std::string::npos)
        return line.substr(line.find("\"loss\": "), 30);
    return std::string("none");
  };
  EXPECT_NE(valid_loss_at_3(full), "none");
  EXPECT_NE(valid_loss_at_3(split), "none");
  EXPECT_NE(valid_loss_at_3(full), valid_loss_at_3(split));

  // A checkpoint whose weights are the EMA's.
  const std::string ema_as_model = root_ + "/ema-as-model.pt";
  {
    auto loaded = loading::load_model(full + "/checkpoint_last.pt", tasks::describe_model, torch::kCPU,
                                      /*use_ema=*/true);
    for (const auto& p : loaded.model->named_parameters())
      if (full_ema.count(p.key())) {
        EXPECT_TRUE(torch::equal(p.value(), full_ema.at(p.key()))) << p.key();
      }
    checkpoint::CheckpointWriter writer;
    writer.set_meta(loaded.meta);
    writer.set_model(*loaded.model);
    writer.capture_rng_state();
    writer.write(ema_as_model);
  }
  // The hypotheses and their scores (the log's other lines have timings).
  auto generate = [&](const std::string& checkpoint, const std::vector<std::string>& extra, int expected_exit = 0) {
    std::vector<std::string> command = {std::string(CSAN_BIN_DIR) + "/csan-generate",
                                        "--path",
                                        checkpoint,
                                        "--input",
                                        root_ + "/raw/test.src",
                                        "--beam",
                                        "2",
                                        "--max-len-b",  // an all but untrained model: short outputs
                                        "4"};
    command.insert(command.end(), extra.begin(), extra.end());
    const std::string log = root_ + "/ema-generate.log";
    EXPECT_EQ(run(command, log), expected_exit) << slurp(log);
    std::istringstream lines(slurp(log));
    std::string line, hypotheses;
    while (std::getline(lines, line))
      if (line.rfind("H-", 0) == 0 || line.rfind("P-", 0) == 0 || expected_exit != 0) hypotheses += line + "\n";
    return hypotheses;
  };
  const std::string with_ema = generate(full + "/checkpoint_last.pt", {"--use-ema"});
  EXPECT_NE(with_ema.find("H-0\t"), std::string::npos) << with_ema;
  EXPECT_NE(with_ema, generate(full + "/checkpoint_last.pt", {}));
  EXPECT_EQ(with_ema, generate(ema_as_model, {}));
  // A checkpoint without EMA: one line naming it.
  const std::string refused = generate(ema_as_model, {"--use-ema"}, 1);
  EXPECT_NE(refused.find(ema_as_model + ": has no EMA weights"), std::string::npos) << refused;
}

}  // namespace
}  // namespace csan::training
