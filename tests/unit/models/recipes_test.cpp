// The model sections of the shipped recipes build the models they promise. (The
// training sections belong to the trainer's schema and are tested there.)
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "tests/support/model_fixtures.h"
#include "toolkit/core/config.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/parameter_count.h"

namespace {

using namespace csan;

int64_t recipe_parameters(const std::string& name, int64_t vocab) {
  const std::string path = std::string(CSAN_SOURCE_DIR) + "/recipes/" + name;
  YAML::Node model_section = YAML::LoadFile(path)["model"];
  EXPECT_TRUE(model_section.IsMap()) << path;
  YAML::Node only_model;
  only_model["model"] = model_section;
  const auto cfg = csan::testing::recipe(YAML::Dump(only_model));
  nn::SkipInitialization skip;
  return nn::count_parameters(*models::build_model(cfg, csan::testing::joined(vocab)));
}

TEST(Recipes, ModelSectionsBuildTheDocumentedModels) {
  EXPECT_EQ(recipe_parameters("transformer-base.yaml", 8000), 44138496 + 512 * 8000);
  EXPECT_EQ(recipe_parameters("transformer-big.yaml", 8000), 176357376 + 1024 * 8000);
  const int64_t d = 64;
  EXPECT_EQ(recipe_parameters("tiny-transformer.yaml", 1000),
            2 * (12 * d * d + 13 * d) + 2 * (16 * d * d + 19 * d) + 1000 * d);
}

}  // namespace
