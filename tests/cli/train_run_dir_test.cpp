// csan-train's save dir as a person and a second process meet it: one run at a time
// (a lock naming the holder), nothing left behind by a start that failed, each update
// once in metrics.jsonl and in the TensorBoard log after a resume, the run's provenance
// (run.json, recipe.yaml, in every checkpoint too), and batches that must have a bound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "cli_runner.h"
#include "tests/support/text_files.h"
#include "toolkit/core/directory_lock.h"
#include "toolkit/core/tensorboard_event.h"

namespace fs = std::filesystem;
using csan::testing::slurp;
using namespace csan::testing;

namespace {

const std::string& data_dir() {
  static const std::string dir = make_toy_data("run_dir_data", 200, 20, 6);
  return dir;
}

// A short run: tiny model, small batches, a log line and a validation every 2 updates.
RunResult train(const std::string& save_dir, int max_update, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {bin("csan-train"),
                                   std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
                                   "--data",
                                   data_dir(),
                                   "--save-dir",
                                   save_dir,
                                   "--max-update",
                                   std::to_string(max_update),
                                   "--max-tokens",
                                   "256",
                                   "--log-interval",
                                   "1",
                                   "--validate-interval-updates",
                                   "2",
                                   "--save-interval-updates",
                                   "2",
                                   "--set",
                                   "optimization.max_epoch=0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

bool one_line(const std::string& text) { return std::count(text.begin(), text.end(), '\n') == 1; }

// The update of each record of a kind in metrics.jsonl, in file order.
std::vector<int64_t> logged_updates(const std::string& save_dir, const std::string& kind) {
  std::ifstream in(save_dir + "/metrics.jsonl");
  std::vector<int64_t> updates;
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line);
    EXPECT_EQ(record["task"], "translation") << line;
    if (record["kind"] == kind) updates.push_back(record["update"].get<int64_t>());
  }
  return updates;
}

// The steps of the scalar events in every events file of a TensorBoard run folder
// (TFRecord framing: length, its CRC, the Event, its CRC).
std::vector<int64_t> event_steps(const std::string& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<int64_t> steps;
  for (const auto& file : files) {
    const std::string bytes = slurp(file.string());
    for (size_t at = 0; at + 12 <= bytes.size();) {
      uint64_t length;
      std::memcpy(&length, bytes.data() + at, 8);
      const auto event = csan::outline_event(std::string_view(bytes).substr(at + 12, length));
      EXPECT_TRUE(event.has_value()) << file;
      if (event && event->has_summary) steps.push_back(event->step);
      at += 12 + length + 4;
    }
  }
  return steps;
}

TEST(TrainRunDir, ASecondRunOnALockedSaveDirStopsAtOnceNamingTheHolder) {
  const std::string save = make_temp_dir("locked");
  {
    csan::core::DirectoryLock held(save);  // this process plays the first run
    auto r = train(save, 2);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("in use by another csan-train (pid " + std::to_string(::getpid()) + ")"), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(save + "/metrics.jsonl"));
  }
  // Released (as by a crash: the lock file stays, its flock is gone): the next run works.
  ASSERT_TRUE(fs::exists(csan::core::DirectoryLock::lock_file(save)));
  auto r = train(save, 2);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(TrainRunDir, AStartThatFailsLeavesNoSaveDir) {
  const std::string save = make_temp_dir("failed") + "/new";
  // Fails while building the model (layer 5 of a 2-layer encoder), after data and recipe.
  auto r = train(save, 2, {"--arch", "csan2d_tiny", "--set", "model.csan.encoder_layers=[5]"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_FALSE(fs::exists(save)) << "no empty save dir, no empty metrics.jsonl";
  auto bleu = train(save, 2, {"--set", "checkpoint.best_checkpoint_metric=bleu"});
  EXPECT_NE(bleu.exit_code, 0);
  EXPECT_NE(bleu.err.find("checkpoint.best_checkpoint_metric"), std::string::npos) << bleu.err;
  EXPECT_FALSE(fs::exists(save));
}

// Token ids beyond the dictionary (a .bin binarized with another dictionary) are found
// when the data is opened, naming the file, the record and the id, not deep in training.
TEST(TrainRunDir, TokenIdsOutsideTheDictionaryAreNamedWhenTheDataIsOpened) {
  const std::string data = make_temp_dir("short_dict");
  for (const auto& entry : fs::directory_iterator(data_dir()))
    fs::copy(entry.path(), data + "/" + entry.path().filename().string());
  std::ifstream in(data_dir() + "/dict.src.txt");
  std::ofstream out(data + "/dict.src.txt");
  std::string line;
  for (int i = 0; i < 20 && std::getline(in, line); ++i) out << line << "\n";
  out.close();
  const std::string save = make_temp_dir("short_dict_run") + "/new";
  auto r = run({bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml", "--data", data,
                "--save-dir", save, "--max-update", "1", "--set", "model.share_all_embeddings=false"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("train.src-tgt.src.bin: record "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is not in " + data + "/dict.src.txt (24 entries)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(save));
}

// Training pairs longer than the model's positions are left out with a count (as
// fairseq filters by size); in the validation split they are an error naming the pair.
TEST(TrainRunDir, PairsLongerThanTheModelsPositions) {
  const std::string save = make_temp_dir("long_pairs");
  auto skipped =
      train(save + "/a", 2, {"--set", "model.max_source_positions=12", "--set", "dataset.disable_validation=true"});
  EXPECT_EQ(skipped.exit_code, 0) << skipped.err;
  EXPECT_NE(skipped.err.find("longer than the model's positions left out"), std::string::npos) << skipped.err;
  auto refused = train(save + "/b", 2, {"--set", "model.max_source_positions=12"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(one_line(refused.err)) << refused.err;
  EXPECT_NE(refused.err.find("valid.src-tgt: pair "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("model.max_source_positions 12"), std::string::npos) << refused.err;
}

TEST(TrainRunDir, BatchesNeedABound) {
  const std::string save = make_temp_dir("unbounded") + "/new";
  auto unbounded = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
                                     "--data",          data_dir(),
                                     "--save-dir",      save,
                                     "--max-update",    "2",
                                     "--max-tokens",    "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  };
  auto r = unbounded({});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("key 'dataset.max_tokens'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(save));
  EXPECT_EQ(unbounded({"--max-sentences", "8"}).exit_code, 0) << "0 with another bound";
}

// A run resumed from an earlier checkpoint than its last log line drops what the
// earlier process logged after it: metrics.jsonl and the TensorBoard runs hold each
// update once, and the log ends where the resumed run ended.
TEST(TrainRunDir, ResumingKeepsEachUpdateOnceInMetricsAndTensorBoard) {
  const std::string save = make_temp_dir("resumed"), tb = save + "/tb";
  ASSERT_EQ(train(save, 6, {"--tensorboard-logdir", tb}).exit_code, 0);
  EXPECT_EQ(logged_updates(save, "train"), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(fs::exists(save + "/checkpoint_1_4.pt"));
  auto r = train(save, 8, {"--tensorboard-logdir", tb, "--restore-file", save + "/checkpoint_1_4.pt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(logged_updates(save, "train"), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  const auto valid = logged_updates(save, "valid");
  EXPECT_EQ(std::set<int64_t>(valid.begin(), valid.end()).size(), valid.size()) << "one validation per update";
  EXPECT_EQ(event_steps(tb + "/train_inner"), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  const auto valid_steps = event_steps(tb + "/valid");
  EXPECT_EQ(valid_steps, valid);
  // Resuming a run that is already done trains and writes nothing.
  const auto before = slurp(save + "/metrics.jsonl");
  auto done = train(save, 8, {"--tensorboard-logdir", tb});
  EXPECT_EQ(done.exit_code, 0) << done.err;
  EXPECT_NE(done.err.find("nothing to train"), std::string::npos) << done.err;
  EXPECT_EQ(slurp(save + "/metrics.jsonl"), before);
}

// A run that stopped by patience is done: resuming it (a rerun of an experiment script)
// trains nothing more. Maximizing the loss (which falls) makes the second validation the
// first without improvement.
TEST(TrainRunDir, ResumingARunStoppedByPatienceTrainsNothing) {
  const std::string save = make_temp_dir("patience");
  const std::vector<std::string> stop_early = {"--patience", "1", "--set",
                                               "checkpoint.maximize_best_checkpoint_metric=true"};
  auto first = train(save, 40, stop_early);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_NE(first.err.find("no improvement in 1 validations"), std::string::npos) << first.err;
  const auto before = slurp(save + "/metrics.jsonl");
  auto again = train(save, 40, stop_early);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("the run stopped early"), std::string::npos) << again.err;
  EXPECT_EQ(slurp(save + "/metrics.jsonl"), before);
}

TEST(TrainRunDir, TheRunSaysWhatProducedIt) {
  const std::string save = make_temp_dir("provenance");
  ASSERT_EQ(train(save, 2, {"--seed", "9"}).exit_code, 0);
  auto info = nlohmann::json::parse(slurp(save + "/run.json"));
  for (const char* key : {"command", "csan_version", "libtorch", "blas", "cpu", "cpu_flags", "precision", "threads"})
    EXPECT_TRUE(info.contains(key)) << key;
  EXPECT_NE(info["command"].get<std::string>().find("--seed 9"), std::string::npos);
  EXPECT_EQ(info["task"], "translation");
  EXPECT_EQ(info["precision"], "fp32");
  EXPECT_NE(info["blas"].get<std::string>(), "unknown");
  EXPECT_NE(info["libtorch"].get<std::string>().find('.'), std::string::npos) << info["libtorch"];
  // The resolved recipe reads back through --print-recipe unchanged.
  auto printed = run({bin("csan-train"), save + "/recipe.yaml", "--print-recipe"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_EQ(printed.out, slurp(save + "/recipe.yaml"));
  // Every checkpoint carries the same record.
  EXPECT_NE(slurp(save + "/checkpoint_last.pt").find(info["csan_version"].get<std::string>()), std::string::npos);
}

}  // namespace
