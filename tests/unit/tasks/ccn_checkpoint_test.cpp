// CCN checkpoints where they do not belong: given to a tagging task (the toy tagging task
// of toy_tagging.h stands in for the tagger), and weights that do not fit the two-memory
// model its recipe describes. Each is a one-line error naming the key or the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/model_fixtures.h"
#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/nn/init.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/training/recipe_compat.h"
#include "toolkit/training/trainer_parts.h"
#include "toy_tagging.h"

namespace fs = std::filesystem;

namespace {

using csan::testing::error_of;

using namespace csan;

std::string ccn_temp_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("csan-ccn-checkpoint-test-" + std::to_string(::getpid())) / name;
  remove_tree(dir.string());
  fs::create_directories(dir);
  return dir.string();
}

const char* const kTagging =
    "task:\n  name: toy_tagging\n  data: (in memory)\nmodel:\n  arch: toy_tagger\n"
    "dataset:\n  max_tokens: 0\n  max_sentences: 8\n";

// A translation checkpoint of `model` under `recipe_yaml`, with empty (4-symbol) dictionaries.
std::string write_checkpoint(const std::string& path, const std::string& recipe_yaml, const torch::nn::Module& model) {
  checkpoint::CheckpointMeta meta;
  meta.task = "translation";
  meta.recipe_yaml = recipe_yaml;
  meta.data = {{"src_dict", ""}, {"tgt_dict", ""}, {"src_lang", "src"}, {"tgt_lang", "tgt"}};
  checkpoint::CheckpointWriter writer;
  writer.set_meta(meta);
  writer.set_progress({});
  writer.set_model(model);
  writer.write(path);
  return path;
}

const models::ModelContext kFourSymbols = csan::testing::joined(4);

TEST(CcnCheckpoints, GivenToATaggingTaskIsRefusedNamingTheTask) {
  tasks::testing::register_toy_tagging();
  const std::string ccn_recipe = csan::testing::recipe("model:\n  arch: ccn_tiny\n").to_yaml();
  auto tagging = csan::testing::recipe(kTagging);
  auto task = tasks::open_task(tagging);
  // Resuming the tagging run from a CCN checkpoint.
  checkpoint::CheckpointMeta saved;
  saved.task = "translation";
  saved.recipe_yaml = ccn_recipe;
  const auto resume = error_of([&] { training::check_resume_compatible(tagging, *task, saved, "ccn.pt"); });
  EXPECT_NE(resume.find("task.name is 'toy_tagging' but 'translation' in ccn.pt"), std::string::npos) << resume;

  // The CCN arch under the tagging task: the families differ.
  const auto family = error_of([] {
    auto cfg = csan::testing::recipe(
        "task:\n  name: toy_tagging\n  data: (in memory)\nmodel:\n  arch: ccn_tiny\n"
        "dataset:\n  max_tokens: 0\n  max_sentences: 8\n");
    auto task = tasks::open_task(cfg);
    training::assemble_trainer_parts(cfg, *task, training::make_precision_policy("fp32"), [](const torch::Device&) {
      return std::make_unique<training::LocalGradientSync>();
    });
  });
  EXPECT_NE(family.find("key 'model.arch'"), std::string::npos) << family;
  EXPECT_NE(family.find("tagging"), std::string::npos) << family;

  // A loaded CCN model handed to the tagging criterion.
  const std::string dir = ccn_temp_dir("tagging");
  nn::SkipInitialization skip;
  auto ccn = models::build_model(csan::testing::recipe("model:\n  arch: ccn_tiny\n"), kFourSymbols);
  auto loaded = loading::load_model(write_checkpoint(dir + "/ccn.pt", ccn_recipe, *ccn), tasks::describe_model);
  EXPECT_EQ(loaded.model->family(), models::kEncoderDecoder);
  tasks::testing::ToyTaggingCriterion criterion;
  const auto criterion_error = error_of([&] { criterion.compute(*loaded.model, training::TensorBatch{}); });
  EXPECT_NE(criterion_error.find("the toy tagging criterion needs"), std::string::npos) << criterion_error;
  EXPECT_NE(criterion_error.find("encoder-decoder model"), std::string::npos) << criterion_error;
}

// Weights that do not fit the two-memory model the recipe describes: a Transformer's
// (no second branch), or a CCN of another width. The error names the file and the first
// tensor that does not fit.
TEST(CcnCheckpoints, WeightsThatDoNotFitTheTwoMemoryModelAreAOneLineErrorNamingTheTensor) {
  const std::string dir = ccn_temp_dir("misfit");
  const std::string ccn_recipe = csan::testing::recipe("model:\n  arch: ccn_tiny\n").to_yaml();
  nn::SkipInitialization skip;
  auto transformer = models::build_model(
      csan::testing::recipe("model:\n  arch: transformer_tiny\n  normalize_before: true\n  attn_bias: false\n"),
      kFourSymbols);
  const std::string one_memory = write_checkpoint(dir + "/one-memory.pt", ccn_recipe, *transformer);
  const auto missing = error_of([&] { loading::load_model(one_memory, tasks::describe_model); });
  EXPECT_EQ(missing,
            one_memory +
                ": the weights do not fit this model (no tensor 'encoder.layers.0.left.self_attn.in_proj_weight' "
                "in the file; different architecture or vocabulary?)");

  auto narrow = models::build_model(csan::testing::recipe("model:\n  arch: ccn_tiny\n  embed_dim: 32\n"), kFourSymbols);
  const std::string other_width = write_checkpoint(dir + "/narrow.pt", ccn_recipe, *narrow);
  const auto shape = error_of([&] { loading::load_model(other_width, tasks::describe_model); });
  EXPECT_NE(shape.find(other_width + ": the weights do not fit this model (tensor 'encoder.embed_tokens.weight' is "
                                     "[4, 32] in the file, [4, 64] in the model"),
            std::string::npos)
      << shape;
  EXPECT_EQ(shape.find('\n'), std::string::npos);
}

}  // namespace
