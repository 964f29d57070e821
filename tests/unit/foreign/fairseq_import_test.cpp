// Each fairseq fixture (tests/data/interop/fairseq/, made with fairseq's own code) imports,
// and csan's model gives the log-probs fairseq's model gave on the fixture batch (two
// Multi30k pairs, fairseq's collater: the source left-padded) within 1e-4.
#include "toolkit/foreign/fairseq_import.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "toolkit/loading/model_loader.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/tasks/recipe.h"

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

}  // namespace
