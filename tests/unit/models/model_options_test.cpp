// Recipe keys belong to an arch, a task or an attention entry, and each is written once:
// a key of another arch or of an entry that no chain names is an error naming the key
// and its owner; chains name their entries per site role; presets come from one place;
// a resolved recipe reads back to the same recipe; every registering file is linked.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "tests/support/model_fixtures.h"
#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/models/presets.h"
#include "toolkit/models/transformer.h"
#include "toolkit/nn/csan_entry.h"
#include "toolkit/nn/init.h"
#include "toolkit/tasks/task_registry.h"

namespace {

using csan::testing::error_of;

using namespace csan;

TEST(ModelOptions, KeyOfAnotherArchOrAnUnnamedEntryIsAnErrorNamingKeyAndOwner) {
  const auto message =
      error_of([] { csan::testing::recipe("model:\n  arch: transformer_base\n  csan:\n    window: 5\n"); });
  EXPECT_NE(message.find("key 'model.csan.window'"), std::string::npos) << message;
  EXPECT_NE(message.find("arch transformer_base"), std::string::npos) << message;
  EXPECT_NE(message.find("attention entry csan"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line";
  // A site role that no arch has is an unknown key (with a suggestion); another arch's
  // role names its owners.
  const auto site = error_of([] {
    csan::testing::recipe("model:\n  arch: transformer_base\n  attention:\n    encoder.middle.self: [csan]\n");
  });
  EXPECT_NE(site.find("unknown key 'model.attention.encoder.middle.self'"), std::string::npos) << site;
  const auto role = error_of(
      [] { csan::testing::recipe("model:\n  arch: transformer_base\n  attention:\n    encoder.left.self: [csan]\n"); });
  EXPECT_NE(role.find("key 'model.attention.encoder.left.self': is not a key of arch transformer_base (it belongs to "
                      "arch ccn"),
            std::string::npos)
      << role;
  // An entry that is not registered, named by its chain's key.
  const auto entry = error_of(
      [] { csan::testing::recipe("model:\n  arch: transformer_base\n  attention:\n    encoder.self: [csann]\n"); });
  EXPECT_NE(entry.find("model.attention.encoder.self"), std::string::npos) << entry;
  EXPECT_NE(entry.find("csann"), std::string::npos) << entry;
}

// Naming an entry in a chain brings its keys and their defaults; a CSAN preset is the
// same model as its Transformer with the chain written out.
TEST(ModelOptions, AChainBringsItsEntrysKeysAndBuildsTheSameModelAsThePreset) {
  nn::SkipInitialization skip;
  auto by_chain = csan::testing::recipe(
      "model:\n  arch: transformer_base\n  attention:\n    encoder.self: [csan]\n  csan:\n    head_window: 1\n");
  EXPECT_EQ(by_chain.get<int64_t>("model.csan.window"), 11);  // the entry's default
  EXPECT_EQ(by_chain.get<std::vector<int64_t>>("model.csan.encoder_layers"), (std::vector<int64_t>{0, 1, 2}));
  auto windows = [](const core::Config& cfg) {
    auto model =
        std::dynamic_pointer_cast<models::TransformerModel>(models::build_model(cfg, csan::testing::joined(30)));
    std::string out;
    model->for_each_attention([&](const nn::AttentionSite& site, nn::MultiheadAttention& attention) {
      auto* csan = dynamic_cast<nn::CsanEntry*>(attention->chain().computing_entry());
      out += site.role + ":" + (csan ? std::to_string(csan->window().window) : "-") + " ";
    });
    return out;
  };
  EXPECT_EQ(windows(by_chain), windows(csan::testing::recipe("model:\n  arch: csan1d_base\n")));
  // An empty chain turns a CSAN preset into its Transformer, and the preset's CSAN keys
  // leave the resolved recipe.
  auto emptied = csan::testing::recipe(
      "model:\n  arch: csan2d_base\n  attention:\n    encoder.self: []\n"
      "    decoder.self: []\n");
  EXPECT_EQ(windows(emptied), windows(csan::testing::recipe("model:\n  arch: transformer_base\n")));
  EXPECT_EQ(emptied.to_yaml().find("csan:"), std::string::npos) << emptied.to_yaml();
}

TEST(ModelOptions, ResolvedRecipesReadBackToTheSameRecipe) {
  for (const std::string yaml :
       {"model:\n  arch: transformer_base\n", "model:\n  arch: csan2d_tiny\n  csan:\n    decoder_layers: [1]\n",
        "model:\n  arch: csan2d_base\n  attention:\n    encoder.self: []\n",
        "model:\n  arch: transformer_tiny\n  attention:\n    decoder.self: [csan]\n  csan:\n    decoder_layers: "
        "[0]\n"}) {
    const auto resolved = csan::testing::recipe(yaml);
    const auto again = csan::testing::recipe(resolved.to_yaml());
    EXPECT_EQ(again.to_yaml(), resolved.to_yaml()) << yaml;
  }
}

// Presets shared between arch files live in models/presets.h: every CSAN preset is its
// Transformer size plus its chain.
TEST(ModelOptions, SharedPresetsComeFromOnePlace) {
  for (const std::string size : {"tiny", "base", "big"}) {
    const auto& dims = models::transformer_size(size);
    for (const std::string& arch : {"transformer_" + size, "csan1d_" + size, "csan2d_" + size}) {
      const auto& preset = models::arch_registry().get(arch).preset;
      for (const auto& [key, value] : dims) {
        ASSERT_TRUE(preset.count(key)) << arch << " lacks " << key;
        EXPECT_TRUE(preset.at(key) == value) << arch << " differs at " << key;
      }
    }
  }
  EXPECT_THROW(models::transformer_size("huge"), Error);
}

// Each file that registers archs, attention entries or tasks is linked into every
// binary by its anchor (cmake/CsanComponents.cmake): every name a
// Registrar in such a file registers is in its registry. A file added without its
// anchor fails to link; a registrar whose name is not registered fails here, naming it.
TEST(Registration, EveryRegisteringFileIsLinked) {
  struct Folder {
    std::string dir, suffix;
    std::function<bool(const std::string&)> registered;
  };
  const std::vector<Folder> folders = {
      {"models", "_arch.cpp", [](const std::string& n) { return models::arch_registry().contains(n); }},
      {"nn", "_entry.cpp", [](const std::string& n) { return nn::attention_entry_registry().contains(n); }},
      {"tasks", "_task.cpp", [](const std::string& n) { return tasks::task_registry().contains(n); }},
  };
  // The name is a string literal or a constant defined as one in a header of the folder.
  const std::regex registrar(R"re(Registrar<\w+>\s+\w+\(\s*\w+\(\),\s*(?:"([^"]+)"|(\w+)))re");
  const auto constant_value = [](const std::string& dir, const std::string& constant) {
    const std::regex definition(constant + R"re(\s*=\s*"([^"]+)")re");
    for (const auto& header : std::filesystem::directory_iterator(dir)) {
      if (header.path().extension() != ".h") continue;
      std::ifstream in(header.path());
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      std::smatch m;
      if (std::regex_search(text, m, definition)) return m[1].str();
    }
    return "(" + constant + ": no definition found in " + dir + ")";
  };
  int files = 0;
  for (const auto& folder : folders) {
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(CSAN_SOURCE_DIR) + "/toolkit/" + folder.dir)) {
      const std::string name = entry.path().filename().string();
      if (name.size() <= folder.suffix.size() ||
          name.compare(name.size() - folder.suffix.size(), std::string::npos, folder.suffix) != 0)
        continue;
      ++files;
      std::ifstream in(entry.path());
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      EXPECT_NE(text.find("CSAN_REGISTRATION_ANCHOR(" + name.substr(0, name.size() - 4) + ")"), std::string::npos)
          << entry.path() << " lacks its anchor";
      int names = 0;
      for (std::sregex_iterator it(text.begin(), text.end(), registrar), end; it != end; ++it, ++names) {
        const std::string registered =
            (*it)[1].matched ? (*it)[1].str()
                             : constant_value(std::string(CSAN_SOURCE_DIR) + "/toolkit/" + folder.dir, (*it)[2]);
        EXPECT_TRUE(folder.registered(registered)) << entry.path() << " registers '" << registered << "', which is missing";
      }
      EXPECT_GT(names, 0) << entry.path() << " registers nothing";
    }
  }
  EXPECT_GE(files, 4);
}

}  // namespace
