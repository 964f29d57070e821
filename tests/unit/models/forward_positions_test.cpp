// forward_positions (logits of selected target positions, used by the training
// criterion to skip padding) equals the full forward's logits at those positions, and
// gradients through it equal those of the full forward restricted to them.
#include <gtest/gtest.h>

#include "tests/support/model_fixtures.h"
#include "toolkit/core/config.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/models/transformer.h"

namespace {

using namespace csan;

std::shared_ptr<models::EncoderDecoderModel> tiny_model(const std::string& arch) {
  const auto cfg =
      csan::testing::recipe("model:\n  arch: " + arch + "\n  dropout: 0.0\n  share_all_embeddings: true\n");
  torch::manual_seed(2);
  return csan::testing::translation_model(cfg, csan::testing::joined(48));
}

struct Batch {
  torch::Tensor src, lengths, prev, positions;
};

models::NamedTensors inputs(const Batch& b) {
  return {{"src_tokens", b.src}, {"src_lengths", b.lengths}, {"prev_output_tokens", b.prev}};
}

Batch padded_batch() {
  torch::manual_seed(4);
  Batch b;
  b.src = torch::randint(4, 48, {3, 6}, torch::kLong);
  b.src[2].narrow(0, 4, 2).fill_(1);
  b.lengths = torch::tensor({6, 6, 4}, torch::kLong);
  b.prev = torch::randint(4, 48, {3, 5}, torch::kLong);
  b.positions = torch::tensor({0, 1, 2, 3, 4, 5, 6, 10, 11, 12}, torch::kLong);  // rows 1 and 2 padded at the end
  return b;
}

TEST(ForwardPositions, EqualsFullLogitsAtThePositions) {
  for (std::string arch : {"transformer_tiny", "csan2d_tiny"}) {
    auto model = tiny_model(arch);
    model->eval();
    torch::NoGradGuard no_grad;
    auto b = padded_batch();
    auto full = model->forward(b.src, b.lengths, b.prev);
    auto selected = model->forward_positions(inputs(b), b.positions);
    ASSERT_EQ(selected.sizes(), (std::vector<int64_t>{10, 48})) << arch;
    EXPECT_TRUE(torch::allclose(selected, full.reshape({-1, 48}).index_select(0, b.positions), 1e-5, 1e-5)) << arch;
  }
}

TEST(ForwardPositions, GradientsEqualThoseOfTheFullForward) {
  auto model = tiny_model("transformer_tiny");
  model->train();  // dropout is 0: deterministic
  auto b = padded_batch();
  auto loss_of = [&](const torch::Tensor& logits) { return (logits.log_softmax(-1) * torch::arange(48.0)).sum(); };
  loss_of(model->forward_positions(inputs(b), b.positions)).backward();
  std::vector<torch::Tensor> selected;
  for (const auto& p : model->parameters()) selected.push_back(p.grad().clone()), p.mutable_grad().zero_();
  auto full = model->forward(b.src, b.lengths, b.prev);
  loss_of(full.reshape({-1, 48}).index_select(0, b.positions)).backward();
  const auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    // Float rounding differs with the summation order: compare relative to the scale.
    const double scale = params[i].grad().abs().max().item<double>();
    EXPECT_LE((selected[i] - params[i].grad()).abs().max().item<double>(), 1e-5 * scale + 1e-6) << i;
  }
}

}  // namespace
