// csan-export's library: each interop fixture (made with fairseq's and transformers' own
// code) imported and exported again gives the fixture's tensors bit for bit under the
// fixture's names, its dictionaries and SentencePiece models byte for byte, and imports back
// to the same csan checkpoint (weights, recipe, dictionaries: so it decodes identically).
// What a format cannot express is a one-line error naming the arch or option; an existing
// folder is never overwritten without --force.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "toolkit/checkpoint/stored_tensor.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/foreign/fairseq_export.h"
#include "toolkit/foreign/fairseq_import.h"
#include "toolkit/foreign/marian_export.h"
#include "toolkit/foreign/marian_import.h"
#include "toolkit/foreign/pickle_reader.h"
#include "toolkit/foreign/torch_save_writer.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/safetensors/reader.h"
#include "toolkit/tasks/recipe.h"

namespace fs = std::filesystem;
namespace csan::foreign {
namespace {

const std::string kInterop = std::string(CSAN_SOURCE_DIR) + "/tests/data/interop";

class Export : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("csan_export_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::map<std::string, torch::Tensor> state_dict(const PickleValue& model) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [key, value] : model.entries) out[key->text] = value->tensor;
  return out;
}

std::map<std::string, torch::Tensor> safetensors_of(const std::string& path) {
  std::map<std::string, torch::Tensor> out;
  const csan::safetensors::Reader reader(path);
  for (const auto& view : reader.tensors()) out[view.name] = csan::checkpoint::copy_of(view, path);
  return out;
}

// Same names, and each tensor bit for bit (dtype, shape, values).
void expect_same_tensors(const std::map<std::string, torch::Tensor>& got,
                         const std::map<std::string, torch::Tensor>& want) {
  std::vector<std::string> got_names, want_names;
  for (const auto& [name, t] : got) got_names.push_back(name);
  for (const auto& [name, t] : want) want_names.push_back(name);
  ASSERT_EQ(got_names, want_names);
  for (const auto& [name, t] : want) {
    const torch::Tensor& g = got.at(name);
    EXPECT_EQ(g.scalar_type(), t.scalar_type()) << name;
    ASSERT_EQ(g.sizes(), t.sizes()) << name;
    EXPECT_TRUE(torch::equal(g.contiguous().view(torch::kInt), t.contiguous().view(torch::kInt))) << name;
  }
}

// Two csan checkpoints hold the same model: recipe, task data and every weight bit for bit.
void expect_same_checkpoint(const std::string& a, const std::string& b) {
  auto x = csan::loading::load_model(a, csan::tasks::describe_model);
  auto y = csan::loading::load_model(b, csan::tasks::describe_model);
  EXPECT_EQ(x.meta.recipe_yaml, y.meta.recipe_yaml);
  EXPECT_EQ(x.meta.data, y.meta.data);
  std::map<std::string, torch::Tensor> xs, ys;
  for (const auto& p : x.model->named_parameters()) xs[p.key()] = p.value();
  for (const auto& p : y.model->named_parameters()) ys[p.key()] = p.value();
  expect_same_tensors(xs, ys);
}

std::string file_text(const std::string& path) { return csan::read_file(path); }

// The message of the csan::Error `body` throws ("" if none).
std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const csan::Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(Export, TorchSaveWriterRoundTripsThroughTheReader) {
  const torch::Tensor fused = torch::arange(12, torch::kFloat).view({4, 3});
  const auto parts = fused.chunk(2, 0);
  const PicklePtr root =
      pickle_dict({{"none", pickle_none()},
                   {"flags", pickle_list({pickle_bool(true), pickle_bool(false)})},
                   {"ints", pickle_list({pickle_int(3), pickle_int(-7), pickle_int(int64_t{1} << 40)})},
                   {"float", pickle_float(0.1)},
                   {"text", pickle_string("Grüße")},
                   {"args", pickle_namespace({{"arch", pickle_string("transformer")}})},
                   {"low", pickle_tensor(parts[0])},
                   {"high", pickle_tensor(parts[1])}});
  write_torch_save(*root, at("x.pt"));
  const PicklePtr back = read_torch_save(at("x.pt"));
  EXPECT_EQ(back->find("none")->kind, PickleValue::Kind::none);
  EXPECT_TRUE(back->find("flags")->items[0]->boolean);
  EXPECT_FALSE(back->find("flags")->items[1]->boolean);
  EXPECT_EQ(back->find("ints")->items[1]->integer, -7);
  EXPECT_EQ(back->find("ints")->items[2]->integer, int64_t{1} << 40);
  EXPECT_EQ(back->find("float")->floating, 0.1);
  EXPECT_EQ(back->find("text")->text, "Grüße");
  EXPECT_EQ(back->find("args")->kind, PickleValue::Kind::object);
  EXPECT_EQ(back->find("args")->text, "argparse Namespace");
  EXPECT_EQ(back->find("args")->find("arch")->text, "transformer");
  EXPECT_TRUE(torch::equal(back->find("low")->tensor, parts[0]));
  EXPECT_TRUE(torch::equal(back->find("high")->tensor, parts[1]));
  // The two views share one storage in the file, as torch.save writes them.
  EXPECT_EQ(back->find("low")->tensor.storage().data(), back->find("high")->tensor.storage().data());
  EXPECT_NE(error_of([&] { torch_save_bytes(*pickle_tensor(torch::zeros({2}, torch::kLong))); }).find("Long"),
            std::string::npos);
}

class FairseqExport : public Export, public ::testing::WithParamInterface<std::string> {};

TEST_P(FairseqExport, ImportThenExportGivesTheFixtureBack) {
  const std::string fixture = kInterop + "/fairseq/" + GetParam();
  FairseqImportOptions options;
  options.checkpoint = fixture + "/checkpoint.pt";
  options.source_spm = kInterop + "/spm/en.model";
  options.target_spm = kInterop + "/spm/de.model";
  import_fairseq(options, at("imported.pt"));
  export_fairseq(at("imported.pt"), at("out"), false);

  const PicklePtr original = read_torch_save(options.checkpoint);
  const PicklePtr exported = read_torch_save(at("out/checkpoint.pt"));
  expect_same_tensors(state_dict(*exported->find("model")), state_dict(*original->find("model")));
  // The settings fairseq builds the model from, as the fixture has them.
  const PickleValue& model = *exported->find("cfg")->find("model");
  const PickleValue& want = *original->find("cfg")->find("model");
  EXPECT_EQ(model.kind, PickleValue::Kind::object);
  EXPECT_EQ(model.text, "argparse Namespace");
  for (const char* key : {"encoder_embed_dim", "encoder_ffn_embed_dim", "encoder_layers", "encoder_attention_heads",
                          "decoder_layers", "max_source_positions", "max_target_positions"})
    EXPECT_EQ(model.find(key)->integer, want.find(key)->integer) << key;
  for (const char* key : {"encoder_normalize_before", "decoder_normalize_before", "encoder_learned_pos",
                          "decoder_learned_pos", "share_all_embeddings", "no_scale_embedding", "layernorm_embedding"})
    EXPECT_EQ(model.find(key)->boolean, want.find(key)->boolean) << key;
  // fairseq ties the output projection itself under share_all_embeddings; the export says so.
  EXPECT_EQ(model.find("share_decoder_input_output_embed")->boolean,
            want.find("share_decoder_input_output_embed")->boolean || want.find("share_all_embeddings")->boolean);
  EXPECT_EQ(model.find("activation_fn")->text, want.find("activation_fn")->text);
  EXPECT_EQ(exported->find("cfg")->find("task")->find("source_lang")->text, "en");
  for (const char* file : {"dict.en.txt", "dict.de.txt"})
    EXPECT_EQ(file_text(at("out/") + file), file_text(fixture + "/" + file));
  EXPECT_EQ(file_text(at("out/spm.en.model")), file_text(kInterop + "/spm/en.model"));
  EXPECT_EQ(file_text(at("out/spm.de.model")), file_text(kInterop + "/spm/de.model"));

  FairseqImportOptions again;
  again.checkpoint = at("out/checkpoint.pt");
  again.source_spm = at("out/spm.en.model");
  again.target_spm = at("out/spm.de.model");
  import_fairseq(again, at("reimported.pt"));
  expect_same_checkpoint(at("imported.pt"), at("reimported.pt"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FairseqExport,
                         ::testing::Values("transformer_postnorm_shared", "transformer_iwslt_prenorm_learned",
                                           "transformer_untied_noscale"));

TEST_F(Export, MarianImportThenExportGivesTheFixtureBack) {
  const std::string fixture = kInterop + "/marian";
  import_marian({fixture, "", ""}, at("imported.pt"));
  export_marian(at("imported.pt"), at("out"), false);
  expect_same_tensors(safetensors_of(at("out/model.safetensors")), safetensors_of(fixture + "/model.safetensors"));
  EXPECT_EQ(nlohmann::json::parse(file_text(at("out/vocab.json"))),
            nlohmann::json::parse(file_text(fixture + "/vocab.json")));
  const auto config = nlohmann::json::parse(file_text(at("out/config.json")));
  auto want = nlohmann::json::parse(file_text(fixture + "/config.json"));
  for (const char* mine_only : {"tie_word_embeddings"}) EXPECT_TRUE(config.contains(mine_only));
  for (const char* theirs_only : {"transformers_version", "init_std"}) want.erase(theirs_only);
  for (const auto& [key, value] : want.items()) EXPECT_EQ(config.value(key, nlohmann::json()), value) << key;
  const auto generation = nlohmann::json::parse(file_text(at("out/generation_config.json")));
  auto want_generation = nlohmann::json::parse(file_text(fixture + "/generation_config.json"));
  want_generation.erase("transformers_version");
  EXPECT_EQ(generation, want_generation);
  EXPECT_EQ(file_text(at("out/source.spm")), file_text(fixture + "/source.spm"));
  EXPECT_EQ(file_text(at("out/target.spm")), file_text(fixture + "/target.spm"));
  const auto tokenizer = nlohmann::json::parse(file_text(at("out/tokenizer_config.json")));
  EXPECT_EQ(tokenizer["source_lang"], "en");
  EXPECT_EQ(tokenizer["tokenizer_class"], "MarianTokenizer");

  import_marian({at("out"), "", ""}, at("reimported.pt"));
  expect_same_checkpoint(at("imported.pt"), at("reimported.pt"));
}

TEST_F(Export, WhatAFormatCannotExpressIsRefusedNamingIt) {
  FairseqImportOptions options;
  options.checkpoint = kInterop + "/fairseq/transformer_postnorm_shared/checkpoint.pt";
  options.source_spm = kInterop + "/spm/en.model";
  import_fairseq(options, at("fairseq.pt"));
  import_marian({kInterop + "/marian", "", ""}, at("marian.pt"));
  const std::string tiny = std::string(CSAN_SOURCE_DIR) + "/tests/data/format2-tiny/";
  const std::vector<std::pair<std::function<void()>, std::string>> cases = {
      {[&] { export_marian(at("fairseq.pt"), at("a"), false); },
       at("fairseq.pt") + ": model.sinusoidal_layout fairseq: MarianMT cannot express it"},
      {[&] { export_fairseq(at("marian.pt"), at("a"), false); },
       at("marian.pt") + ": model.sinusoidal_layout marian (fairseq has its own sinusoidal table only): fairseq's "
                         "transformer cannot express it"},
      {[&] { export_fairseq(tiny + "int8.pt", at("a"), false); },
       tiny + "int8.pt: an inference-only int8 checkpoint (convert-checkpoint): export the float32 checkpoint"},
      {[&] { export_marian(tiny + "bf16.pt", at("a"), false); }, tiny + "bf16.pt: an inference-only bf16 checkpoint"},
      {[&] { export_fairseq(std::string(CSAN_SOURCE_DIR) + "/tests/data/format1-csan2d-tiny.pt", at("a"), false); },
       "format1-csan2d-tiny.pt: model.arch 'csan2d_tiny' (model.attention.encoder.self: csan): fairseq cannot express "
       "its attention entries"},
      {[&] { export_fairseq(at("missing.pt"), at("a"), false); }, at("missing.pt")},
  };
  for (const auto& [body, message] : cases) {
    const std::string error = error_of(body);
    EXPECT_NE(error.find(message), std::string::npos) << "got: " << error << "\nwant: " << message;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(at("a")));
  }
}

TEST_F(Export, AnExistingFolderIsReplacedOnlyWithForce) {
  import_marian({kInterop + "/marian", "", ""}, at("marian.pt"));
  fs::create_directories(at("out"));
  std::ofstream(at("out/keep.txt")) << "mine";
  const std::string error = error_of([&] { export_marian(at("marian.pt"), at("out"), false); });
  EXPECT_NE(error.find(at("out") + ": exists and is not empty (nothing written; --force replaces it)"),
            std::string::npos)
      << error;
  EXPECT_EQ(file_text(at("out/keep.txt")), "mine");
  EXPECT_FALSE(fs::exists(at("out/config.json")));
  std::ofstream(at("file")) << "x";
  EXPECT_NE(error_of([&] { export_marian(at("marian.pt"), at("file"), true); }).find("exists and is not a folder"),
            std::string::npos);
  export_marian(at("marian.pt"), at("out"), true);
  EXPECT_FALSE(fs::exists(at("out/keep.txt")));
  EXPECT_TRUE(fs::exists(at("out/model.safetensors")));
  // An empty folder is used as it is.
  fs::create_directories(at("empty"));
  export_fairseq(std::string(CSAN_SOURCE_DIR) + "/tests/data/format2-tiny/checkpoint.pt", at("empty"), false);
  EXPECT_TRUE(fs::exists(at("empty/checkpoint.pt")));
  EXPECT_TRUE(fs::exists(at("empty/spm.model")));
}

}  // namespace
}  // namespace csan::foreign
