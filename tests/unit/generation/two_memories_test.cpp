// Named encoder memories carry the CCN shape: a toy model whose encoder has two branches
// with crossed attention (queries from one branch, keys and values from the other) and
// whose decoder reads both memories with crossed keys and values (keys from "left",
// values from "right", and the other way round), each cached under a key that names the
// memories. Incremental decoding with beam reorders and sentences leaving equals full
// recomputation, and beam search over it scores hypotheses as the full model does.
#include <gtest/gtest.h>

#include "tiny_model.h"
#include "toolkit/generation/sequence_generator.h"
#include "toolkit/nn/multihead_attention.h"

namespace {

using namespace csan;
using namespace csan::generation;
using namespace csan::generation::testing;

class TwoMemoryModel : public models::EncoderDecoderModel {
 public:
  explicit TwoMemoryModel(int64_t dim) {
    auto attention = [&](const std::string& name) {
      return register_module(name, nn::MultiheadAttention(nn::MultiheadAttentionOptions{dim, 2, 0.0, true}));
    };
    embed_ = register_module("embed", torch::nn::Embedding(kVocab, dim));
    left_ = register_module("left", torch::nn::Linear(dim, dim));
    right_ = register_module("right", torch::nn::Linear(dim, dim));
    left_attn_ = attention("left_attn");
    right_attn_ = attention("right_attn");
    self_attn_ = attention("self_attn");
    cross_lr_ = attention("cross_lr");
    cross_rl_ = attention("cross_rl");
    fuse_ = register_module("fuse", torch::nn::Linear(2 * dim, dim));
    out_ = register_module("out", torch::nn::Linear(dim, kVocab));
  }

  models::EncoderOut encode(const models::NamedTensors& input) override {
    const auto& src = input.at("src_tokens");
    auto x = embed_(src);
    auto mask = src.eq(kPad);
    nn::AttentionCall call;
    call.key_padding_mask = mask;
    auto l = left_(x), r = right_(x);
    models::EncoderOut out;
    out.add("left", {l + left_attn_(r, l, l, call), mask});    // Q from the right branch
    out.add("right", {r + right_attn_(l, r, r, call), mask});  // Q from the left branch
    return out;
  }

  torch::Tensor decode(const torch::Tensor& prev, const models::EncoderOut& enc, nn::IncrementalState* state) override {
    const int64_t cached = state ? state->length("decoder.self_attn.prev_key") : 0;
    auto x = embed_(prev.narrow(1, cached, prev.size(1) - cached));
    nn::AttentionCall self;
    self.causal = true;
    self.state = state;
    self.cache_key = "decoder.self_attn";
    x = x + self_attn_(x, x, x, self);
    const auto &left = enc.at("left"), &right = enc.at("right");
    auto cross = [&](nn::MultiheadAttention& attention, const models::Memory& keys, const models::Memory& values,
                     const std::string& cache_key) {
      nn::AttentionCall call;
      call.key_padding_mask = keys.padding_mask;
      call.state = state;
      call.static_kv = true;
      call.cache_key = cache_key;
      call.query_offset = cached;
      return attention(x, keys.out, values.out, call);
    };
    auto a = cross(cross_lr_, left, right, "decoder.cross_lr.left>right");
    auto b = cross(cross_rl_, right, left, "decoder.cross_rl.right>left");
    return out_(x + fuse_(torch::cat({a, b}, -1)));
  }
  int64_t max_source_positions() const override { return 1024; }
  int64_t max_target_positions() const override { return 64; }

 private:
  torch::nn::Embedding embed_{nullptr};
  torch::nn::Linear left_{nullptr}, right_{nullptr}, fuse_{nullptr}, out_{nullptr};
  nn::MultiheadAttention left_attn_{nullptr}, right_attn_{nullptr}, self_attn_{nullptr}, cross_lr_{nullptr},
      cross_rl_{nullptr};
};

std::shared_ptr<TwoMemoryModel> two_memory_model(uint64_t seed) {
  torch::manual_seed(seed);
  auto model = std::make_shared<TwoMemoryModel>(16);
  model->eval();
  return model;
}

TEST(TwoMemories, IncrementalDecodingWithReordersEqualsFullRecomputation) {
  auto model = two_memory_model(3);
  const double difference = incremental_vs_full_with_beam_reorders(
      *model, random_sources(3, 17), 3, 8, [](const nn::IncrementalState& state) {
        // Both crossed attentions cached, under keys naming their memories.
        EXPECT_TRUE(state.has("decoder.cross_lr.left>right.prev_key"));
        EXPECT_TRUE(state.has("decoder.cross_rl.right>left.prev_value"));
      });
  EXPECT_LT(difference, 1e-5);
}

// Beam search over the two-memory decoder (the ensemble decoder reorders its named
// memories when sentences leave): every hypothesis' positional scores are the full
// model's log-probabilities of its tokens.
TEST(TwoMemories, BeamSearchScoresAreTheFullModelsLogProbabilities) {
  torch::NoGradGuard no_grad;
  auto model = two_memory_model(5);
  auto batch = random_sources(5, 23);
  SearchOptions o;
  o.beam = 3;
  o.nbest = 3;
  o.max_len_a = 1.0;
  o.max_len_b = 3;
  SequenceGenerator generator({model}, o);
  auto hyps = generator.generate(batch.tokens, batch.lengths);
  int checked = 0;
  for (int64_t s = 0; s < 5; ++s) {
    ASSERT_FALSE(hyps[s].empty());
    const int64_t len = batch.lengths[s].item<int64_t>();
    auto src = batch.tokens[s].narrow(0, 0, len).unsqueeze(0);
    for (const auto& h : hyps[s]) {
      std::vector<int64_t> prev{kEos};
      prev.insert(prev.end(), h.tokens.begin(), h.tokens.end() - 1);
      auto lprobs =
          torch::log_softmax(model->forward(src, torch::tensor({len}), torch::tensor(prev).view({1, -1})), -1);
      for (size_t t = 0; t < h.tokens.size(); ++t) {
        EXPECT_NEAR(h.positional_scores[t], lprobs[0][t][h.tokens[t]].item<double>(), 1e-4)
            << "sentence " << s << " position " << t;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
