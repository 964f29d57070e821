#include "toolkit/core/config.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/registry.h"

namespace {

using csan::core::Config;
using csan::core::ConfigSchema;

ConfigSchema test_schema() {
  ConfigSchema s;
  s.add_string("model.arch", "transformer", "architecture", {"transformer", "transformer_base"});
  s.add_int("model.embed_dim", 512, "embedding size", 1);
  s.add_int("model.encoder_layers", 6, "layers", 1, 1000);
  s.add_double("model.dropout", 0.1, "dropout", 0.0, 1.0);
  s.add_bool("model.share_all_embeddings", false, "share");
  s.add_string("checkpoint.save_dir", "checkpoints", "where");
  s.add_double_list("optimization.lr", std::vector<double>{5e-4}, "learning rates", 0.0);
  s.add_int_list("optimization.update_freq", std::vector<int64_t>{1}, "accumulation", 1);
  s.add_int("optimization.max_update", std::nullopt, "stop after");
  return s;
}

std::string write_temp(const std::string& name, const std::string& text) {
  auto path = (std::filesystem::temp_directory_path() / name).string();
  csan::write_file_atomically(path, text);
  return path;
}

// Runs f, expects a csan::Error, returns its message.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const csan::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected csan::Error";
  return "";
}

TEST(Config, LoadsNestedYamlAsDottedKeysWithDefaults) {
  Config cfg(test_schema());
  cfg.load_yaml_string(
      "model:\n  embed_dim: 256\n  dropout: 0\n  share_all_embeddings: true\n"
      "optimization:\n  lr: [0.001, 0.002]\n  update_freq: 4\n");
  EXPECT_EQ(cfg.get<int64_t>("model.embed_dim"), 256);
  EXPECT_EQ(cfg.get<int>("model.encoder_layers"), 6);       // declared default
  EXPECT_DOUBLE_EQ(cfg.get<double>("model.dropout"), 0.0);  // int accepted for a number
  EXPECT_TRUE(cfg.get<bool>("model.share_all_embeddings"));
  EXPECT_EQ(cfg.get<std::vector<double>>("optimization.lr"), (std::vector<double>{0.001, 0.002}));
  EXPECT_EQ(cfg.get<std::vector<int64_t>>("optimization.update_freq"), std::vector<int64_t>{4});
  EXPECT_TRUE(cfg.is_set("model.embed_dim"));
  EXPECT_FALSE(cfg.is_set("model.encoder_layers"));
  EXPECT_FALSE(cfg.has("optimization.max_update"));
  EXPECT_NE(error_of([&] { cfg.get<int64_t>("optimization.max_update"); }).find("optimization.max_update"),
            std::string::npos);
}

TEST(Config, UnknownKeySuggestsNearestWithFileAndLine) {
  auto path = write_temp("csan_cfg_unknown.yaml", "model:\n  embed_dim: 3\n  embed_dimm: 512\n");
  Config cfg(test_schema());
  EXPECT_EQ(error_of([&] { cfg.load_file(path); }),
            path + ":3: unknown key 'model.embed_dimm' (did you mean 'model.embed_dim'?)");
  // A key without its section is suggested with it.
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("dropout: 0.3\n", "r.yaml"); }),
            "r.yaml:1: unknown key 'dropout' (did you mean 'model.dropout'?)");
  // Nothing close: no suggestion.
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("zzzzzzzzzzzzzz: 1\n", "r.yaml"); }),
            "r.yaml:1: unknown key 'zzzzzzzzzzzzzz'");
}

TEST(Config, WrongTypeNamesKeyAndExpectedType) {
  Config cfg(test_schema());
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("model:\n  encoder_layers: six\n", "r.yaml"); }),
            "r.yaml:2: key 'model.encoder_layers': expected an integer, got 'six'");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("model:\n  encoder_layers: 2.5\n", "r.yaml"); }),
            "r.yaml:2: key 'model.encoder_layers': expected an integer, got '2.5'");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("model:\n  share_all_embeddings: 3\n", "r.yaml"); }),
            "r.yaml:2: key 'model.share_all_embeddings': expected a boolean, got '3'");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("model:\n  dropout: [1]\n", "r.yaml"); }),
            "r.yaml:2: key 'model.dropout': expected a number, got a list");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("optimization:\n  lr: [0.1, x]\n", "r.yaml"); }),
            "r.yaml:2: key 'optimization.lr': expected a list of numbers, got 'x'");
}

TEST(Config, OutOfRangeAndDisallowedValues) {
  Config cfg(test_schema());
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("model:\n  dropout: 1.5\n", "r.yaml"); }),
            "r.yaml:2: key 'model.dropout': 1.5 is out of range [0, 1]");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("model:\n  embed_dim: 0\n", "r.yaml"); }),
            "r.yaml:2: key 'model.embed_dim': 0 is out of range >= 1");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("model:\n  arch: lstm\n", "r.yaml"); }),
            "r.yaml:2: key 'model.arch': 'lstm' is not one of: transformer, transformer_base");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("optimization:\n  update_freq: [2, 0]\n", "r.yaml"); }),
            "r.yaml:2: key 'optimization.update_freq': 0 is out of range >= 1");
}

TEST(Config, MalformedYamlNamesFileAndLine) {
  auto path = write_temp("csan_cfg_bad.yaml", "model:\n  embed_dim: 3\n  dropout: [0.1\n  x: 1\n");
  Config cfg(test_schema());
  std::string message = error_of([&] { cfg.load_file(path); });
  EXPECT_EQ(message.rfind(path + ":", 0), 0u) << message;
  EXPECT_NE(message.find("malformed YAML"), std::string::npos) << message;
  // Line of the problem, 1-based.
  auto tab = write_temp("csan_cfg_tab.yaml", "model:\n  embed_dim: 3\n\tdropout: 1\n");
  message = error_of([&] { cfg.load_file(tab); });
  EXPECT_EQ(message.rfind(tab + ":3: malformed YAML", 0), 0u) << message;
  EXPECT_EQ(error_of([&] { cfg.load_file("/nonexistent/recipe.yaml"); }).find("/nonexistent/recipe.yaml"), 0u);
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("- a\n- b\n", "r.yaml"); }),
            "r.yaml:1: a recipe must be a mapping of keys");
}

TEST(Config, KeyGivenTwiceIsAnError) {
  Config cfg(test_schema());
  EXPECT_EQ(
      error_of([&] { cfg.load_yaml_string("model:\n  dropout: 0.1\n  embed_dim: 8\n  dropout: 0.3\n", "r.yaml"); }),
      "r.yaml:4: key 'model.dropout' is given twice (first at r.yaml:2)");
  // A second file may override the first (recipe then a local overlay).
  cfg.load_yaml_string("model:\n  dropout: 0.2\n", "a.yaml");
  cfg.load_yaml_string("model:\n  dropout: 0.4\n", "b.yaml");
  EXPECT_DOUBLE_EQ(cfg.get<double>("model.dropout"), 0.4);
}

// yaml-cpp hands both entries of a repeated section to the walker; merging them would
// silently accept the two halves of a recipe pasted together.
TEST(Config, SectionGivenTwiceIsAnError) {
  Config cfg(test_schema());
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("model:\n  dropout: 0.1\nmodel:\n  embed_dim: 8\n", "r.yaml"); }),
            "r.yaml:3: key 'model' is given twice (first at r.yaml:1)");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("{model: {dropout: 0.1}, model: {dropout: 0.2}}", "r.yaml"); }),
            "r.yaml:1: key 'model' is given twice (first at r.yaml:1)");
}

// Found by fuzzing: yaml-cpp writes invalid UTF-8 in a quoted string back as U+FFFD, so
// the recipe stored in a checkpoint would differ from the one given.
TEST(Config, StringsMustBeValidUtf8) {
  Config cfg(test_schema());
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("checkpoint:\n  save_dir: \"ab\x97\"\n", "r.yaml"); }),
            "r.yaml:2: key 'checkpoint.save_dir': the value is not valid UTF-8");
  EXPECT_EQ(error_of([&] { cfg.apply_override("checkpoint.save_dir=caf\xe9"); }),
            "--set checkpoint.save_dir: the value is not valid UTF-8");
  // Not read as UTF-16 because it starts with a byte-order mark.
  EXPECT_EQ(error_of([&] { cfg.apply_override(std::string("checkpoint.save_dir=\xfe\xff\x00a", 24)); }),
            "--set checkpoint.save_dir: the value is not valid UTF-8");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("checkpoint:\n  save_dir: \"a\xef\xbf\xbf\"\n", "r.yaml"); }),
            "r.yaml:2: key 'checkpoint.save_dir': the value holds the Unicode noncharacter U+FFFF");
  EXPECT_EQ(error_of([&] { cfg.apply_override("checkpoint.save_dir=\xef\xb7\x90"); }),
            "--set checkpoint.save_dir: key 'checkpoint.save_dir': the value holds the Unicode noncharacter U+FDD0");
  // A CR left by Windows line endings; it did not survive to_yaml() at the end of a value.
  EXPECT_EQ(error_of([&] { cfg.apply_override("checkpoint.save_dir=out\r"); }),
            "--set checkpoint.save_dir: key 'checkpoint.save_dir': the value holds the control character U+000D");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("checkpoint:\n  save_dir: \"a\\x16b\"\n", "r.yaml"); }),
            "r.yaml:2: key 'checkpoint.save_dir': the value holds the control character U+0016");
  cfg.apply_override("checkpoint.save_dir=caf\xc3\xa9 \xe2\x80\xa8\xef\xbb\xbf");  // é, U+2028, U+FEFF are text
  EXPECT_EQ(cfg.get<std::string>("checkpoint.save_dir"), "caf\xc3\xa9 \xe2\x80\xa8\xef\xbb\xbf");
}

TEST(Config, EmptyRecipeIsAnError) {
  Config cfg(test_schema());
  auto path = write_temp("csan_cfg_empty.yaml", "");
  EXPECT_EQ(error_of([&] { cfg.load_file(path); }), path + ": the recipe is empty (expected a mapping of keys)");
  EXPECT_EQ(error_of([&] { cfg.load_yaml_string("# only a comment\n", "r.yaml"); }),
            "r.yaml: the recipe is empty (expected a mapping of keys)");
}

TEST(Config, OverridesParseYamlValues) {
  Config cfg(test_schema());
  cfg.load_yaml_string("model:\n  embed_dim: 256\n");
  cfg.apply_override("model.embed_dim=1024");
  cfg.apply_override("optimization.lr=[0.1, 0.2]");
  cfg.apply_override("model.share_all_embeddings=true");
  cfg.apply_override("checkpoint.save_dir=out dir: x");
  cfg.apply_override("optimization.max_update=100");
  EXPECT_EQ(cfg.get<int64_t>("model.embed_dim"), 1024);
  EXPECT_EQ(cfg.get<std::vector<double>>("optimization.lr"), (std::vector<double>{0.1, 0.2}));
  EXPECT_TRUE(cfg.get<bool>("model.share_all_embeddings"));
  EXPECT_EQ(cfg.get<std::string>("checkpoint.save_dir"), "out dir: x");
  EXPECT_EQ(cfg.get<int64_t>("optimization.max_update"), 100);
}

TEST(Config, BadOverridesAreErrors) {
  Config cfg(test_schema());
  EXPECT_EQ(error_of([&] { cfg.apply_override("model.embed_dim"); }), "--set 'model.embed_dim': expected KEY=VALUE");
  EXPECT_EQ(error_of([&] { cfg.apply_override("model.embed_dimm=3"); }),
            "--set: unknown key 'model.embed_dimm' (did you mean 'model.embed_dim'?)");
  EXPECT_EQ(error_of([&] { cfg.apply_override("model.encoder_layers=many"); }),
            "--set model.encoder_layers: key 'model.encoder_layers': expected an integer, got 'many'");
  EXPECT_EQ(error_of([&] { cfg.apply_override("model.dropout=-0.5"); }),
            "--set model.dropout: key 'model.dropout': -0.5 is out of range [0, 1]");
  EXPECT_NE(error_of([&] { cfg.apply_override("optimization.lr=[0.1"); }).find("--set optimization.lr: malformed"),
            std::string::npos);
}

TEST(Config, ProgrammaticSetIsValidatedLikeTheRecipe) {
  Config cfg(test_schema());
  cfg.set("optimization.max_update", 50);  // a plain int literal selects the integer type
  cfg.set("model.dropout", 0.25);
  cfg.set("checkpoint.save_dir", "out");
  EXPECT_EQ(cfg.get<int64_t>("optimization.max_update"), 50);
  EXPECT_TRUE(cfg.is_set("model.dropout"));
  EXPECT_EQ(cfg.get<std::string>("checkpoint.save_dir"), "out");
  EXPECT_EQ(error_of([&] { cfg.set("model.dropout", 2.0); }), "setting: key 'model.dropout': 2 is out of range [0, 1]");
  EXPECT_EQ(error_of([&] { cfg.set("model.embed_dim", std::string("x")); }),
            "setting: key 'model.embed_dim': expected an integer, got a string");
  EXPECT_THROW(cfg.get<double>("model.embed_dim"), csan::Error);  // read as the wrong type
}

TEST(Config, PresetsFillOnlyWhatWasNotGiven) {
  Config cfg(test_schema());
  cfg.load_yaml_string("model:\n  embed_dim: 256\n");
  cfg.set_default("model.embed_dim", int64_t{1024});
  cfg.set_default("model.encoder_layers", int64_t{12});
  EXPECT_EQ(cfg.get<int64_t>("model.embed_dim"), 256);
  EXPECT_EQ(cfg.get<int64_t>("model.encoder_layers"), 12);
  EXPECT_THROW(cfg.set_default("model.dropout", 2.0), csan::Error);
  EXPECT_EQ(error_of([&] { cfg.set_default("model.embed_dimm", int64_t{3}); }),
            "preset: unknown key 'model.embed_dimm' (did you mean 'model.embed_dim'?)");
}

TEST(Config, ToYamlRoundTripsExactly) {
  Config cfg(test_schema());
  cfg.load_yaml_string("model:\n  dropout: 0.30000000000000004\n  embed_dim: 7\noptimization:\n  lr: [1e-3, 3]\n");
  cfg.apply_override("checkpoint.save_dir=yes");  // a string that YAML would read as a boolean
  cfg.set_default("model.encoder_layers", int64_t{3});
  std::string text = cfg.to_yaml();
  Config back = Config::from_yaml_string(text, test_schema());
  EXPECT_EQ(back.get<double>("model.dropout"), 0.30000000000000004);
  EXPECT_EQ(back.get<int64_t>("model.embed_dim"), 7);
  EXPECT_EQ(back.get<int64_t>("model.encoder_layers"), 3);
  EXPECT_EQ(back.get<std::vector<double>>("optimization.lr"), (std::vector<double>{1e-3, 3.0}));
  EXPECT_EQ(back.get<std::string>("checkpoint.save_dir"), "yes");
  EXPECT_EQ(back.get<std::string>("model.arch"), "transformer");
  EXPECT_FALSE(back.has("optimization.max_update"));
  EXPECT_EQ(back.to_yaml(), text);
}

TEST(Config, SchemaRejectsConflictingRedeclaration) {
  ConfigSchema s = test_schema();
  s.add_int("model.embed_dim", 256, "same type again is fine");
  EXPECT_THROW(s.add_double("model.embed_dim", 1.0, "other type"), csan::Error);
  EXPECT_THROW(s.add_double("x.p", 2.0, "default out of range", 0.0, 1.0), csan::Error);
}

TEST(Registry, ListsKnownNamesInErrors) {
  csan::core::Registry<int> registry("arch");
  csan::core::Registrar<int> a(registry, "b_second", 2);
  csan::core::Registrar<int> b(registry, "a_first", 1);
  EXPECT_EQ(registry.get("a_first"), 1);
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"a_first", "b_second"}));
  EXPECT_EQ(error_of([&] { registry.get("x"); }), "unknown arch 'x'; known: a_first, b_second");
  EXPECT_THROW(registry.add("a_first", 3), csan::Error);
}

}  // namespace
