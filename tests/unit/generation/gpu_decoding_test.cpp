// Decoding on a CUDA GPU (skipped where LibTorch sees none: CI): beam search there finds
// the CPU's translations, fp16 and bf16 projections stay close to fp32, and int8 asks
// for the CPU.
#include <gtest/gtest.h>

#include <tuple>

#include "tiny_model.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/generation/sequence_generator.h"
#include "toolkit/nn/compute_device.h"

namespace {

using namespace csan;
using namespace csan::generation;
using namespace csan::generation::testing;

#define SKIP_WITHOUT_GPU() \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU here"

const torch::Device kGpu(torch::kCUDA, 0);

std::vector<std::vector<Hypothesis>> beam_search(const std::shared_ptr<models::EncoderDecoderModel>& model,
                                                 const SourceBatch& batch) {
  SearchOptions o;
  o.beam = 4;
  o.max_len_b = 12;
  SequenceGenerator generator({model}, o, {0, kPad, kEos, kUnk});
  return generator.generate(batch.tokens, batch.lengths);  // CPU batches: moved where the model is
}

TEST(GpuDecoding, BeamSearchFindsTheCpusTranslations) {
  SKIP_WITHOUT_GPU();
  const auto batch = random_sources(16, 5);
  const auto cpu = beam_search(tiny_model(21), batch);
  auto on_gpu = tiny_model(21);
  on_gpu->to(kGpu);
  const auto gpu = beam_search(on_gpu, batch);
  ASSERT_EQ(cpu.size(), gpu.size());
  int same = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    same += cpu[i][0].tokens == gpu[i][0].tokens;
    EXPECT_NEAR(cpu[i][0].score, gpu[i][0].score, 1e-3) << "sentence " << i;
  }
  EXPECT_GE(same, 15);  // a near tie may break the other way in another summation order
}

// As on the CPU (inference_precision_test): the log-probabilities of a full pass stay
// within a bound of fp32's and keep its argmax, and beam search mostly finds fp32's
// translations (a random model has near ties; where the translation is the same, so is
// its score within the bound). cuBLAS reduces bf16 products in bf16 by default (PyTorch's
// allow_bf16_reduced_precision_reduction), so bf16 drifts further than on the CPU.
TEST(GpuDecoding, HalfWidthProjectionsStayCloseToFp32) {
  SKIP_WITHOUT_GPU();
  torch::NoGradGuard no_grad;
  const auto batch = random_sources(16, 5);
  auto reference = tiny_model(21);
  reference->to(kGpu);
  const auto fp32 = beam_search(reference, batch);
  auto prefix = torch::randint(4, kVocab, {16, 8}, torch::kLong);
  prefix.select(1, 0).fill_(kEos);
  const auto tokens = batch.tokens.to(kGpu), lengths = batch.lengths.to(kGpu);
  const auto full = torch::log_softmax(reference->forward(tokens, lengths, prefix.to(kGpu)), -1);
  for (const auto& [kind, bound, at_least] : std::vector<std::tuple<nn::Precision, double, int>>{
           {nn::Precision::fp16, 0.02, 13}, {nn::Precision::bf16, 0.1, 10}}) {
    const std::string precision = nn::precision_name(kind);
    auto model = tiny_model(21);
    model->to(kGpu);
    const auto report = convert_for_inference(*model, InferencePrecision{kind, {}});
    EXPECT_EQ(report.converted.size(), 2u * 4 + 2u * 6 + 1) << precision;
    const auto low = torch::log_softmax(model->forward(tokens, lengths, prefix.to(kGpu)), -1);
    EXPECT_LT((full - low).abs().max().item<double>(), bound) << precision;
    EXPECT_GE(full.argmax(-1).eq(low.argmax(-1)).to(torch::kFloat).mean().item<double>(), 0.9) << precision;
    const auto found = beam_search(model, batch);
    int same = 0;
    for (size_t i = 0; i < fp32.size(); ++i) {
      if (fp32[i][0].tokens != found[i][0].tokens) continue;
      ++same;
      EXPECT_NEAR(fp32[i][0].score, found[i][0].score, 2.5 * bound) << precision << " sentence " << i;
    }
    EXPECT_GE(same, at_least) << precision;
  }
}

TEST(GpuDecoding, Int8AndFp16NameTheDeviceTheyNeed) {
  auto model = tiny_model(21);
  if (torch::cuda::is_available()) {
    EXPECT_NE(csan::testing::error_of([&] {
                convert_for_inference(*model, InferencePrecision{nn::Precision::fp16, {}});
              }).find("fp16 needs a CUDA device; this model is on the CPU"),
              std::string::npos);
    model->to(kGpu);
    EXPECT_NE(csan::testing::error_of([&] {
                convert_for_inference(*model, InferencePrecision{nn::Precision::int8, {}});
              }).find("int8 runs on the CPU; add --cpu"),
              std::string::npos);
  } else {
    EXPECT_NE(csan::testing::error_of([&] {
                validate(InferencePrecision{nn::Precision::fp16, {}});
              }).find("needs a CUDA device"),
              std::string::npos);
  }
  EXPECT_NE(csan::testing::error_of([&] { nn::parse_precision("amp", "--precision"); }).find("amp is for training"),
            std::string::npos);
}

}  // namespace
