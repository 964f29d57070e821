// The task layer carries a second task without touching the trainer: a toy tagging task
// (words + characters + labels, a TaggingModel, accuracy with early stopping on it)
// trains end to end through run_training, its checkpoint loads through the one loader and
// csan-generate's dispatch reaches its own generation; bad combinations (an unknown task,
// a key of another task, an arch of another family, a checkpoint of another task) are
// one-line errors naming the key or file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/model_fixtures.h"
#include "toolkit/core/error.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/tasks/generate.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/training/recipe_compat.h"
#include "toolkit/training/train_loop.h"
#include "toolkit/training/trainer_parts.h"
#include "toy_tagging.h"

namespace fs = std::filesystem;

namespace {

using csan::testing::error_of;

using namespace csan;

std::string temp_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("csan-task-test-" + std::to_string(::getpid())) / name;
  remove_tree(dir.string());
  return dir.string();
}

const char* const kToyRecipe =
    "task:\n  name: toy_tagging\n  data: (in memory)\nmodel:\n  arch: toy_tagger\n"
    "optimizer:\n  name: adam\noptimization:\n  lr: 0.05\n  max_epoch: 40\n  patience: 2\n"
    "lr_scheduler:\n  name: fixed\ndataset:\n  max_tokens: 0\n  max_sentences: 8\n"
    "checkpoint:\n  best_checkpoint_metric: accuracy\n  no_epoch_checkpoints: true\ncommon:\n  log_interval: 1000\n";

class TaskLayer : public ::testing::Test {
 protected:
  void SetUp() override { tasks::testing::register_toy_tagging(); }
};

TEST_F(TaskLayer, ATaggingTaskTrainsEndToEndWithEarlyStoppingOnAccuracy) {
  const std::string save_dir = temp_dir("toy");
  auto cfg = csan::testing::recipe(kToyRecipe);
  cfg.set("checkpoint.save_dir", save_dir);
  // Keys of its own task and arch only.
  EXPECT_EQ(cfg.get<int64_t>("task.toy_labels"), 3);
  EXPECT_EQ(cfg.to_yaml().find("source_lang"), std::string::npos);
  EXPECT_EQ(cfg.to_yaml().find("embed_dim"), std::string::npos);
  auto task = tasks::open_task(cfg);
  ASSERT_EQ(training::run_training(cfg, *task), 0);

  // Validation reported accuracy, which rose, and patience on it ended the run early.
  std::ifstream metrics(save_dir + "/metrics.jsonl");
  std::vector<double> accuracy;
  for (std::string line; std::getline(metrics, line);) {
    const auto at = line.find("\"accuracy\": ");
    if (at != std::string::npos) accuracy.push_back(std::stod(line.substr(at + 12)));
  }
  ASSERT_GE(accuracy.size(), 3u);
  EXPECT_LT(accuracy.size(), 40u) << "early stopping on accuracy (patience 2) ends before max_epoch";
  EXPECT_GT(*std::max_element(accuracy.begin(), accuracy.end()), accuracy.front() + 20) << "it learned";

  // The best checkpoint loads through the one loader as a tagging model, and
  // csan-generate's dispatch reaches the task's own generation.
  checkpoint::CheckpointReader reader(save_dir + "/checkpoint_best.pt");
  auto loaded = loading::load_model(reader, tasks::describe_model);
  EXPECT_EQ(loaded.meta.task, "toy_tagging");
  EXPECT_EQ(loaded.model->family(), models::kTagging);
  // The loader keeps no archive (the optimizer state) behind the model it returns.
  EXPECT_NE(error_of([&] { reader.section("optimizer"); }).find("released"), std::string::npos);
  tasks::GenerateOptions options;
  options.paths = {save_dir + "/checkpoint_best.pt"};
  options.input = "4 5 6 7\n9 10\n";  // the toy generation reads ids from the option text
  std::ostringstream out, log;
  tasks::run_generate(options, out, log);
  EXPECT_EQ(out.str(), "1 2 0 1\n0 1\n") << "labels are id mod 3";
}

TEST_F(TaskLayer, UnknownTaskKeyOfAnotherTaskAndArchOfAnotherFamilyAreErrorsNamingTheKey) {
  auto unknown = error_of([] { csan::testing::recipe("task:\n  name: parsing\n"); });
  EXPECT_NE(unknown.find("key 'task.name'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("translation"), std::string::npos) << unknown;

  auto foreign = error_of([] { csan::testing::recipe("task:\n  toy_labels: 4\n"); });
  EXPECT_NE(foreign.find("key 'task.toy_labels'"), std::string::npos) << foreign;
  EXPECT_NE(foreign.find("task toy_tagging"), std::string::npos) << foreign;
  auto back = error_of(
      [] { csan::testing::recipe("task:\n  name: toy_tagging\n  eval_bleu: true\nmodel:\n  arch: toy_tagger\n"); });
  EXPECT_NE(back.find("key 'task.eval_bleu'"), std::string::npos) << back;

  auto family = error_of([] {
    auto cfg = csan::testing::recipe("task:\n  name: toy_tagging\nmodel:\n  arch: transformer_tiny\n");
    auto task = tasks::open_task(cfg);
    training::assemble_trainer_parts(cfg, *task, training::make_precision_policy("fp32"), [](const torch::Device&) {
      return std::make_unique<training::LocalGradientSync>();
    });
  });
  EXPECT_NE(family.find("key 'model.arch'"), std::string::npos) << family;
  EXPECT_NE(family.find("tagging"), std::string::npos) << family;
}

TEST_F(TaskLayer, ACheckpointOfAnotherTaskIsRefused) {
  auto cfg = csan::testing::recipe(kToyRecipe);
  auto task = tasks::open_task(cfg);
  checkpoint::CheckpointMeta translation;
  translation.task = "translation";
  translation.recipe_yaml = "model:\n  arch: transformer_tiny\n";
  const auto message = error_of([&] { training::check_resume_compatible(cfg, *task, translation, "x.pt"); });
  EXPECT_NE(message.find("task.name is 'toy_tagging' but 'translation' in x.pt"), std::string::npos) << message;

  // A checkpoint whose task this build lacks, given to csan-generate.
  const std::string dir = temp_dir("foreign");
  fs::create_directories(dir);
  checkpoint::CheckpointWriter writer;
  checkpoint::CheckpointMeta meta;
  meta.task = "parsing";
  meta.recipe_yaml = "model:\n  arch: transformer_tiny\n";
  writer.set_meta(meta);
  writer.set_progress({});
  writer.write(dir + "/parsing.pt");
  tasks::GenerateOptions options;
  options.paths = {dir + "/parsing.pt"};
  options.input = "-";
  std::ostringstream out, log;
  const auto generate = error_of([&] { tasks::run_generate(options, out, log); });
  EXPECT_NE(generate.find(dir + "/parsing.pt: written by task 'parsing'"), std::string::npos) << generate;
  EXPECT_NE(error_of([&] {
              loading::load_model(dir + "/parsing.pt", tasks::describe_model);
            }).find("written by task 'parsing'"),
            std::string::npos);
}

}  // namespace
