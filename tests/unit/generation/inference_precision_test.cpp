// csan-generate --precision bf16|int8 on a toy model: which layers convert, that the
// search agrees with fp32, that incremental decoding still equals a full recomputation
// in each precision, and the option errors.
#include "toolkit/generation/inference_precision.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/cpuinfo_flags.h"
#include "tests/support/error_message.h"
#include "tiny_model.h"
#include "toolkit/generation/ensemble_decoder.h"
#include "toolkit/generation/sequence_generator.h"
#include "toolkit/nn/converted_weights.h"
#include "toolkit/nn/int8_gemm.h"

namespace {

using namespace csan;
using namespace csan::generation;
using namespace csan::generation::testing;
using csan::testing::message_of;

std::shared_ptr<models::EncoderDecoderModel> converted(const std::string& precision,
                                                       std::vector<std::string> skip = {}) {
  auto model = tiny_model(21);
  convert_for_inference(*model, InferencePrecision{precision, std::move(skip)}, kEos);
  return model;
}

TEST(InferencePrecision, ConvertsEveryProjectionIncludingTheOutputLayerAndHonoursSkips) {
  auto model = tiny_model(21);
  const auto report = convert_for_inference(*model, InferencePrecision{"int8", {}}, kEos);
  // transformer_tiny: 2+2 layers; encoder: in_proj, out_proj, fc1, fc2; decoder: two
  // attentions and fc1, fc2; the output projection (not tied here: the embeddings are
  // only looked up and stay fp32; a tied one converts with it, see the CLI test).
  EXPECT_EQ(report.converted.size(), 2u * 4 + 2u * 6 + 1);
  EXPECT_FALSE(report.engine.empty());
  for (const auto& p : model->named_parameters()) {
    const std::string& k = p.key();
    const bool projection = k.find("in_proj_weight") != std::string::npos || k == "decoder.output_projection" ||
                            (k.find(".weight") != std::string::npos &&
                             (k.find("out_proj") != std::string::npos || k.find(".fc") != std::string::npos));
    EXPECT_EQ(p.value().scalar_type(), projection ? torch::kChar : torch::kFloat) << k;
  }
  auto kept = tiny_model(21);
  const auto skipped =
      convert_for_inference(*kept, InferencePrecision{"bf16", {"decoder.layers.1", "encoder.layers.0.ffn.fc1"}}, kEos);
  EXPECT_EQ(skipped.skipped.size(), 6u + 1);
  for (const auto& p : kept->named_parameters())
    if (p.key().rfind("decoder.layers.1.", 0) == 0 || p.key() == "encoder.layers.0.ffn.fc1.weight") {
      EXPECT_EQ(p.value().scalar_type(), torch::kFloat) << p.key();
    }
}

TEST(InferencePrecision, BadValuesAreOneLineErrorsNamingTheOption) {
  if (!torch::cuda::is_available()) {  // a GPU decodes fp16 (gpu_decoding_test)
    EXPECT_NE(message_of([] {
                validate(InferencePrecision{"fp16", {}});
              }).find("--precision: fp16 needs a CUDA"),
              std::string::npos);
  }
  EXPECT_NE(message_of([] {
              validate(InferencePrecision{"int4", {}});
            }).find("--precision: unknown value 'int4'"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              validate(InferencePrecision{"fp32", {"decoder"}});
            }).find("--quantize-skip"),
            std::string::npos);
  const std::string unknown = message_of([] { converted("int8", {"decoder.layers.7"}); });
  EXPECT_NE(unknown.find("--quantize-skip: 'decoder.layers.7' names no projection"), std::string::npos) << unknown;
  EXPECT_EQ(unknown.find('\n'), std::string::npos);
  // A prefix must end at a name boundary: "decoder.layers.1" does not cover "decoder.layers.10".
  EXPECT_NE(message_of([] { converted("int8", {"decoder.layers.0.ffn.fc"}); }), "");
}

TEST(InferencePrecision, AMissingCpuFlagIsAOneLineWarningNamingIt) {
  EXPECT_NE(missing_cpu_flag_warning("bf16", false).find("avx512_bf16"), std::string::npos);
  EXPECT_NE(missing_cpu_flag_warning("int8", false).find("avx512_vnni"), std::string::npos);
  EXPECT_EQ(missing_cpu_flag_warning("int8", true), "");
  EXPECT_EQ(missing_cpu_flag_warning("fp32", false), "");
  std::ostringstream log;
  convert_ensemble({tiny_model(3)}, InferencePrecision{"int8", {}}, kEos, log);
  EXPECT_NE(log.str().find("int8 products: " + nn::select_int8_products()), std::string::npos) << log.str();
}

// 7-bit activations exactly where the CPU lacks every VNNI flavour (Linux's names).
TEST(InferencePrecision, Int8ActivationsAreReducedExactlyWithoutVnni) {
  const auto flags = csan::testing::cpuinfo_flags();
  if (!flags) GTEST_SKIP() << "no /proc/cpuinfo";
  bool vnni = false;
  for (const char* flag : {" avx512_vnni ", " avx_vnni ", " amx_int8 "}) vnni |= flags->find(flag) != std::string::npos;
  EXPECT_EQ(nn::int8_activations_reduced(), !vnni);
}

// int8's error bound: activations keep 8 bits on a CPU with VNNI and 7 without (see
// nn::int8_activations_reduced), which doubles their rounding step.
double int8_bound(double with_eight_bit_activations) {
  return nn::int8_activations_reduced() ? 2 * with_eight_bit_activations : with_eight_bit_activations;
}

// Per step, the log-probabilities of each precision against fp32 along the same
// prefixes. bf16 keeps 8 significant bits of weights and activations (relative error
// 2^-9 each), int8 7 bits of weights and 8 of activations (7 without VNNI); through 2+2
// layers of d 64 the toy model's log-probabilities (magnitude up to ~15 with its
// sharpened output) move by hundredths to a tenth: bounds 0.1 (bf16) and 0.3 (int8; 0.6
// with 7-bit activations, measured up to 0.41). Argmax must agree on at least 90% of rows
// (only near-ties may flip). A hypothesis score (mean log-probability, possibly along
// another path) gets 2.5x the step bound (bf16 moved one by 0.11). Beam search amplifies
// near-ties into other translations: at least 13 of 16 sentences must be equal (int8: 12),
// 10 with 7-bit activations (measured 10 on an AVX2-only CPU; 2 of 16 before reduce_range).
TEST(InferencePrecision, Bf16AndInt8StepScoresAndSearchAgreeWithFp32) {
  torch::NoGradGuard no_grad;
  auto reference = tiny_model(21);
  const auto batch = random_sources(16, 5);
  for (const auto& [precision, bound] :
       std::vector<std::pair<std::string, double>>{{"bf16", 0.1}, {"int8", int8_bound(0.3)}}) {
    auto model = converted(precision);
    auto prefix = torch::randint(4, kVocab, {16, 8}, torch::kLong);
    prefix.select(1, 0).fill_(kEos);
    const auto full = torch::log_softmax(reference->forward(batch.tokens, batch.lengths, prefix), -1);
    const auto low = torch::log_softmax(model->forward(batch.tokens, batch.lengths, prefix), -1);
    EXPECT_LT((full - low).abs().max().item<double>(), bound) << precision;
    // The mean deviation, a quarter of the bound: measured 0.016 (bf16), 0.038 (int8, csan's
    // kernel) and 0.046 (int8, LibTorch's onednn with per-tensor activations) on the Zen 5.
    EXPECT_LT((full - low).abs().mean().item<double>(), bound / 4) << precision;
    const double same_argmax = full.argmax(-1).eq(low.argmax(-1)).to(torch::kFloat).mean().item<double>();
    EXPECT_GE(same_argmax, 0.9) << precision;

    SearchOptions o;
    o.beam = 4;
    o.max_len_b = 12;
    SequenceGenerator fp32({reference}, o, {0, kPad, kEos, kUnk}), reduced({model}, o, {0, kPad, kEos, kUnk});
    const auto a = fp32.generate(batch.tokens, batch.lengths), b = reduced.generate(batch.tokens, batch.lengths);
    int same = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      same += a[i][0].tokens == b[i][0].tokens;
      EXPECT_NEAR(a[i][0].score, b[i][0].score, 2.5 * bound) << precision << " sentence " << i;
    }
    // int8: 12 with csan's kernel (closer steps on average, other near-ties flip), 13 with onednn.
    const int at_least = precision == "int8" ? (nn::int8_activations_reduced() ? 10 : 12) : 13;
    EXPECT_GE(same, at_least) << precision << ": translations equal to fp32 on at least " << at_least
                              << " of 16 sentences";
  }
}

// Incremental decoding reads earlier positions from the caches and runs one row per
// step through the projections; a full pass runs all positions at once. bf16 products
// round the same operands either way (fp32 accumulation in another order, then the
// bf16 rounding of the output: 1e-3). int8 quantizes the activations of each call with
// one scale and zero point for all its rows, so a step and a full pass quantize a row
// differently, by up to one activation step per product: measured up to 0.2 in
// log-probability, bound 0.3 (0.6 with 7-bit activations: measured 0.42); the argmax
// must not change.
TEST(InferencePrecision, IncrementalDecodingEqualsFullRecomputationInEachPrecision) {
  torch::NoGradGuard no_grad;
  const auto batch = random_sources(3, 31);
  for (const auto& [precision, bound] :
       std::vector<std::pair<std::string, double>>{{"fp32", 1e-5}, {"bf16", 1e-3}, {"int8", int8_bound(0.3)}}) {
    auto model = converted(precision);
    auto encoder_out = model->encode_tokens(batch.tokens, batch.lengths);
    auto prefix = torch::randint(4, kVocab, {3, 8}, torch::kLong);
    prefix.select(1, 0).fill_(kEos);
    const auto full = torch::log_softmax(model->forward(batch.tokens, batch.lengths, prefix), -1);
    // Decoding keeps bf16 and int8 models' caches in bf16 (EnsembleDecoder): keys and
    // values rounded to 8 significant bits add at most ~0.01 here (bound 0.03).
    for (const bool compact : {false, true}) {
      if (compact && precision == "fp32") continue;
      nn::IncrementalState state;
      if (compact) state.set_compact_type(torch::kBFloat16);
      const double step_bound = compact ? bound + 0.03 : bound;
      for (int64_t t = 0; t < prefix.size(1); ++t) {
        auto step = torch::log_softmax(model->decode(prefix.narrow(1, 0, t + 1), encoder_out, &state).select(1, 0), -1);
        EXPECT_LT((step - full.select(1, t)).abs().max().item<double>(), step_bound)
            << precision << (compact ? " compact" : "") << " step " << t;
        EXPECT_TRUE(torch::equal(step.argmax(-1), full.select(1, t).argmax(-1)))
            << precision << (compact ? " compact" : "") << " step " << t;
      }
    }
  }
}

// The search's caches are bf16 exactly where the model decodes converted on the CPU.
TEST(InferencePrecision, ConvertedModelsDecodeWithBf16Caches) {
  torch::NoGradGuard no_grad;
  const auto batch = random_sources(2, 3);
  for (const std::string precision : {"fp32", "bf16", "int8"}) {
    EnsembleDecoder decoder({converted(precision)});
    decoder.start(batch.tokens, batch.lengths, 2);
    EXPECT_EQ(decoder.cache_type(), precision == "fp32" ? torch::kFloat : torch::kBFloat16) << precision;
  }
}

// convert_ensemble lets int8 weights free their plain values once packed for csan's
// kernel: the search gives the same hypotheses, to the last bit of their scores, as a
// model that keeps them, and afterwards every projection it ran holds only its packs.
TEST(InferencePrecision, Int8DecodingWithReleasedValuesEqualsKeepingThem) {
  if (!nn::int8_gemm_available()) GTEST_SKIP() << "csan's int8 kernel needs AVX512-VNNI";
  torch::NoGradGuard no_grad;
  const auto batch = random_sources(6, 8);
  auto kept = converted("int8");
  auto released = tiny_model(21);
  std::ostringstream log;
  convert_ensemble({released}, InferencePrecision{"int8", {}}, kEos, log);
  EXPECT_NE(log.str().find("precision int8: 21 projection(s) per model in int8"), std::string::npos) << log.str();
  SearchOptions o;
  o.beam = 3;
  o.max_len_b = 10;
  SequenceGenerator a({kept}, o, {0, kPad, kEos, kUnk}), b({released}, o, {0, kPad, kEos, kUnk});
  const auto x = a.generate(batch.tokens, batch.lengths), y = b.generate(batch.tokens, batch.lengths);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i].size(), y[i].size());
    for (size_t h = 0; h < x[i].size(); ++h) {
      EXPECT_EQ(x[i][h].tokens, y[i][h].tokens) << i << " " << h;
      EXPECT_EQ(x[i][h].score, y[i][h].score) << i << " " << h;
    }
  }
  int released_weights = 0;
  for (const auto& p : released->parameters()) released_weights += nn::int8_values_released(p);
  EXPECT_EQ(released_weights, 21);
  for (const auto& p : kept->parameters()) EXPECT_FALSE(nn::int8_values_released(p));
}

}  // namespace
