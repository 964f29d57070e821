// Each fairseq fixture (tests/data/interop/fairseq/, made with fairseq's own code) imports,
// and csan's model gives the log-probs fairseq's model gave on the fixture batch (two
// Multi30k pairs, fairseq's collater: the source left-padded) within 1e-4. The same for the
// MarianMT fixture (tests/data/interop/marian/, made with transformers' code), from either
// of its weight files.
#include "toolkit/foreign/fairseq_import.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "toolkit/foreign/marian_import.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/text/dictionary.h"

namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(CSAN_SOURCE_DIR) + "/tests/data/interop/fairseq/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A little-endian float32 C-order .npy file of the given shape (what the fixtures hold).
torch::Tensor read_npy_float32(const std::string& path, const std::vector<int64_t>& shape) {
  const std::string bytes = slurp(path);
  EXPECT_EQ(bytes.compare(0, 6, "\x93NUMPY"), 0) << path;
  const size_t header = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  const std::string dict = bytes.substr(10, header);
  EXPECT_NE(dict.find("'<f4'"), std::string::npos) << dict;
  EXPECT_NE(dict.find("'fortran_order': False"), std::string::npos) << dict;
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  EXPECT_EQ(bytes.size(), 10 + header + 4 * static_cast<size_t>(numel)) << path;
  return torch::from_blob(const_cast<char*>(bytes.data() + 10 + header), shape, torch::kFloat).clone();
}

torch::Tensor long_matrix(const nlohmann::json& rows) {
  std::vector<int64_t> flat;
  for (const auto& row : rows)
    for (const auto& v : row) flat.push_back(v.get<int64_t>());
  return torch::tensor(flat, torch::kLong).view({static_cast<int64_t>(rows.size()), -1});
}

class FairseqLogProbs : public ::testing::TestWithParam<std::string> {};

TEST_P(FairseqLogProbs, MatchFairseqsOwn) {
  const std::string fixture = kFixtures + GetParam();
  const fs::path out = fs::temp_directory_path() / ("csan_fairseq_logprobs_" + GetParam() + ".pt");
  csan::foreign::FairseqImportOptions options;
  options.checkpoint = fixture + "/checkpoint.pt";
  csan::foreign::import_fairseq(options, out.string());
  auto loaded = csan::loading::load_model(out.string(), csan::tasks::describe_model);
  auto& model = dynamic_cast<csan::models::EncoderDecoderModel&>(*loaded.model);

  const auto batch = nlohmann::json::parse(slurp(fixture + "/batch.json"));
  const torch::Tensor src = long_matrix(batch["src_tokens_left_padded"]);
  const torch::Tensor prev = long_matrix(batch["prev_output_tokens"]);
  const torch::Tensor target = long_matrix(batch["target"]);
  const torch::Tensor lengths = torch::tensor(batch["src_lengths"].get<std::vector<int64_t>>(), torch::kLong);
  torch::NoGradGuard no_grad;
  const torch::Tensor lprobs = torch::log_softmax(model.forward(src, lengths, prev), -1);
  const torch::Tensor expected = read_npy_float32(fixture + "/logits.npy", lprobs.sizes().vec());
  // Rows at padded target positions are meaningless (batch.json says so).
  const torch::Tensor real = target.ne(batch["pad"].get<int64_t>());
  ASSERT_GT(real.sum().item<int64_t>(), 20);
  const double worst = (lprobs - expected).abs().index({real}).max().item<double>();
  EXPECT_LT(worst, 1e-4);
  fs::remove(out);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FairseqLogProbs,
                         ::testing::Values("transformer_postnorm_shared", "transformer_iwslt_prenorm_learned",
                                           "transformer_untied_noscale"));

// The fixture's directory with one weight file: model.safetensors or pytorch_model.bin.
class MarianLogProbs : public ::testing::TestWithParam<std::string> {};

TEST_P(MarianLogProbs, MatchTransformersOwn) {
  const std::string fixture = std::string(CSAN_SOURCE_DIR) + "/tests/data/interop/marian/";
  const fs::path dir = fs::temp_directory_path() / ("csan_marian_logprobs_" + GetParam());
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* file : {"config.json", "vocab.json", "source.spm", "target.spm", "tokenizer_config.json"})
    fs::copy_file(fixture + file, dir / file);
  fs::copy_file(fixture + GetParam(), dir / GetParam());
  const fs::path out = dir / "model.pt";
  csan::foreign::import_marian({dir.string(), "", ""}, out.string());
  auto loaded = csan::loading::load_model(out.string(), csan::tasks::describe_model);
  auto& model = dynamic_cast<csan::models::EncoderDecoderModel&>(*loaded.model);
  EXPECT_TRUE(model.decoder_starts_with_pad());
  EXPECT_EQ(loaded.meta.get("src_lang"), "en");
  EXPECT_EQ(loaded.meta.get("tgt_lang"), "de");

  // Marian's ids -> csan's, by piece.
  const auto dict = csan::text::Dictionary::parse(loaded.meta.get("tgt_dict"), "tgt_dict");
  const auto vocab = nlohmann::json::parse(slurp(fixture + "vocab.json"));
  std::vector<int64_t> csan_of_marian(vocab.size());
  for (const auto& [piece, id] : vocab.items()) {
    ASSERT_TRUE(dict.contains(piece)) << piece;
    csan_of_marian[id.get<int64_t>()] = dict.index(piece);
  }
  const torch::Tensor to_csan = torch::tensor(csan_of_marian, torch::kLong);
  ASSERT_EQ(dict.size(), static_cast<int>(vocab.size()) + 1);  // and csan's <s>

  const auto batch = nlohmann::json::parse(slurp(fixture + "batch.json"));
  const torch::Tensor mask = long_matrix(batch["attention_mask"]);
  const torch::Tensor src = to_csan.index({long_matrix(batch["input_ids"])});
  const torch::Tensor prev = to_csan.index({long_matrix(batch["decoder_input_ids"])});
  const torch::Tensor labels = long_matrix(batch["labels"]);
  EXPECT_EQ(prev[0][0].item<int64_t>(), dict.pad());  // Marian's decoder starts from <pad>
  torch::NoGradGuard no_grad;
  const torch::Tensor lprobs = torch::log_softmax(model.forward(src, mask.sum(1), prev), -1);
  const torch::Tensor expected =
      read_npy_float32(fixture + "logits.npy", {lprobs.size(0), lprobs.size(1), static_cast<int64_t>(vocab.size())});
  const torch::Tensor real = labels.ne(batch["pad"].get<int64_t>());
  ASSERT_GT(real.sum().item<int64_t>(), 20);
  const double worst = (lprobs.index_select(2, to_csan) - expected).abs().index({real}).max().item<double>();
  EXPECT_LT(worst, 1e-4);
  // csan's <s>, which Marian lacks, takes no probability.
  EXPECT_EQ(lprobs.select(2, dict.bos()).exp().max().item<float>(), 0.0f);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Fixture, MarianLogProbs, ::testing::Values("model.safetensors", "pytorch_model.bin"),
                         [](const auto& info) { return info.param == "model.safetensors" ? "Safetensors" : "Pickle"; });

}  // namespace
