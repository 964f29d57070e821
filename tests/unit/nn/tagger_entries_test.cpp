// The convoluted-attention tagger's attention variants (Dufter et al. 2020) as attention-
// chain entries, each alone and all together, against a naive reference written from the
// paper's equations (and, for the circulant R, from TensorFlow's definition of a
// circulant operator: F^{-1} diag(spectrum) F with explicit complex DFT matrices) in
// double precision: forward values and the gradients of the input and of every entry
// parameter. Also: parameter counts per head and layer, where the entries apply, and the
// Keras initializers.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <memory>

#include "toolkit/core/error.h"
#include "toolkit/nn/attention_conv1d_entry.h"
#include "toolkit/nn/attention_conv2d_entry.h"
#include "toolkit/nn/keras_init.h"
#include "toolkit/nn/multihead_attention.h"
#include "toolkit/nn/parameter_count.h"
#include "toolkit/nn/position_matrix_entry.h"
#include "toolkit/nn/relative_bias_entry.h"
#include "toolkit/nn/temperature_entry.h"
#include "tests/support/model_fixtures.h"

namespace {

using namespace csan;
using namespace csan::nn;
using torch::Tensor;

constexpr int64_t kTaggerHeads = 2, kTaggerHeadDim = 4, kTaggerDim = kTaggerHeads * kTaggerHeadDim, kMaxPositions = 7;

struct Entries {
  std::shared_ptr<PositionMatrixEntry> p;
  std::shared_ptr<RelativeBiasEntry> r;
  std::shared_ptr<TemperatureEntry> temp;
  std::shared_ptr<AttentionConv1dEntry> conv1d;
  std::shared_ptr<AttentionConv2dEntry> conv2d;
};

// Random (not initial) values, so that every term matters.
void randomize(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  for (auto& p : m.parameters()) p.copy_(torch::randn_like(p) * 0.5);
}

Tensor d(const Tensor& t) { return t.to(torch::kDouble); }

// Re(F^{-1} diag(s) F)[j][k] = sum_m s_m C[j][k][m] with the N-point DFT F[m][k] =
// exp(-2 pi i m k / N) and F^{-1}[j][m] = exp(2 pi i j m / N) / N.
Tensor circulant_coefficients(int64_t n) {
  auto c = torch::zeros({n, n, n}, torch::kDouble);
  auto a = c.accessor<double, 3>();
  const double pi = std::acos(-1.0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t m = 0; m < n; ++m) {
        const std::complex<double> inverse = std::polar(1.0, 2 * pi * double(j * m) / double(n)) / double(n);
        const std::complex<double> forward = std::polar(1.0, -2 * pi * double(m * k) / double(n));
        a[j][k][m] = (inverse * forward).real();
      }
  return c;
}

// The attention of one layer (no output projection) by the equations, in double:
// for each sentence b and head h, with gammas g (Temp),
//   A_ij = (g_q x_i W_q)(g_k x_j W_k)^T / sqrt(d_h) + P_ij + R_ij,  S = softmax_j(A)
//   conv1d: S'_if = relu(c_f + sum_{w,j} S_{i+w-1, j} K_{f,j,w});  conv2d: S'_ij =
//   relu(c + sum_{u,v} S_{i+u-1, j+v-1} K_uv) (zero outside), head_i = sum_j S'_ij g_v x_j W_v.
Tensor naive_tagger_attention(const Tensor& x, const Tensor& w, const Entries& e, bool circulant) {
  const int64_t batch = x.size(0), t = x.size(1);
  static const Tensor coefficients = circulant_coefficients(2 * kMaxPositions);
  std::vector<Tensor> sentences;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> heads;
    for (int64_t h = 0; h < kTaggerHeads; ++h) {
      auto weight = [&](int64_t m) { return d(w).narrow(0, m * kTaggerDim + h * kTaggerHeadDim, kTaggerHeadDim); };
      const Tensor xb = d(x[b]);
      Tensor q = torch::matmul(xb, weight(0).t()), k = torch::matmul(xb, weight(1).t()),
             v = torch::matmul(xb, weight(2).t());
      if (e.temp) q = q * d(e.temp->gammas)[0][h], k = k * d(e.temp->gammas)[1][h], v = v * d(e.temp->gammas)[2][h];
      std::vector<Tensor> rows;
      for (int64_t i = 0; i < t; ++i) {
        std::vector<Tensor> row;
        for (int64_t j = 0; j < t; ++j) {
          Tensor a = (q[i] * k[j]).sum() / std::sqrt(double(kTaggerHeadDim));
          if (e.p) a = a + d(e.p->matrix)[h][i][j];
          if (e.r && !circulant) a = a + d(e.r->weights)[h][i - j + kMaxPositions];
          if (e.r && circulant) a = a + (coefficients[i][j] * d(e.r->weights)[h]).sum();
          row.push_back(a);
        }
        Tensor logits = torch::stack(row);
        Tensor exps = (logits - logits.max()).exp();
        rows.push_back(exps / exps.sum());
      }
      Tensor s = torch::stack(rows);  // [t, t]
      auto at = [&](const Tensor& m, int64_t i, int64_t j) {
        return i < 0 || j < 0 || i >= t || j >= t ? torch::zeros({}, torch::kDouble) : m[i][j];
      };
      if (e.conv1d) {
        std::vector<Tensor> out_rows;
        for (int64_t i = 0; i < t; ++i) {
          std::vector<Tensor> out;
          for (int64_t f = 0; f < t; ++f) {
            Tensor sum = d(e.conv1d->bias)[h * kMaxPositions + f];
            for (int64_t width = 0; width < 3; ++width)
              for (int64_t j = 0; j < t; ++j)
                sum = sum + at(s, i + width - 1, j) * d(e.conv1d->weight)[h * kMaxPositions + f][j][width];
            out.push_back(torch::relu(sum));
          }
          out_rows.push_back(torch::stack(out));
        }
        s = torch::stack(out_rows);
      }
      if (e.conv2d) {
        std::vector<Tensor> out_rows;
        for (int64_t i = 0; i < t; ++i) {
          std::vector<Tensor> out;
          for (int64_t j = 0; j < t; ++j) {
            Tensor sum = d(e.conv2d->bias)[h];
            for (int64_t u = 0; u < 3; ++u)
              for (int64_t vv = 0; vv < 3; ++vv) sum = sum + at(s, i + u - 1, j + vv - 1) * d(e.conv2d->weight)[h][0][u][vv];
            out.push_back(torch::relu(sum));
          }
          out_rows.push_back(torch::stack(out));
        }
        s = torch::stack(out_rows);
      }
      heads.push_back(torch::matmul(s, v));
    }
    sentences.push_back(torch::cat(heads, -1));
  }
  return torch::stack(sentences);
}

MultiheadAttention tagger_attention() {
  MultiheadAttentionOptions o{kTaggerDim, kTaggerHeads, 0.0, /*bias=*/false};
  o.output_projection = false;
  return MultiheadAttention(o);
}

struct TaggerEntriesCase {
  std::string name;
  bool p = false, r = false, circulant = false, temp = false, conv1d = false, conv2d = false;
};

std::vector<Tensor> grads_of(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> out;
  for (const auto& t : tensors) out.push_back(t.grad().defined() ? t.grad().clone() : torch::zeros_like(t));
  return out;
}

TEST(TaggerEntries, EachVariantAloneAndTogetherEqualsTheEquations) {
  const std::vector<TaggerEntriesCase> cases = {
      {"P", true},
      {"R directed", false, true},
      {"R circulant", false, true, true},
      {"Temp", false, false, false, true},
      {"Conv1d", false, false, false, false, true},
      {"Conv2d", false, false, false, false, false, true},
      {"P+R+Temp+Conv1d+Conv2d", true, true, false, true, true, true},
      {"P+R circulant+Temp+Conv2d", true, true, true, true, false, true},
  };
  for (const auto& c : cases) {
    for (const int64_t length : {kMaxPositions, int64_t{5}}) {
      const std::string where = c.name + ", " + std::to_string(length) + " positions";
      torch::manual_seed(11);
      auto mha = tagger_attention();
      Entries e;
      if (c.temp) e.temp = std::make_shared<TemperatureEntry>(kTaggerHeads), mha->add_entry("temperature", e.temp);
      if (c.p) e.p = std::make_shared<PositionMatrixEntry>(kTaggerHeads, kMaxPositions), mha->add_entry("p", e.p);
      if (c.r)
        e.r = std::make_shared<RelativeBiasEntry>(kTaggerHeads, kMaxPositions, c.circulant), mha->add_entry("r", e.r);
      if (c.conv1d)
        e.conv1d = std::make_shared<AttentionConv1dEntry>(kTaggerHeads, kMaxPositions, 3),
        mha->add_entry("c1", e.conv1d);
      if (c.conv2d) e.conv2d = std::make_shared<AttentionConv2dEntry>(kTaggerHeads, 3), mha->add_entry("c2", e.conv2d);
      randomize(*mha);
      if (c.conv1d) {  // conv outputs mostly positive, so that relu passes gradients
        torch::NoGradGuard no_grad;
        e.conv1d->bias.abs_();
      }
      if (c.conv2d) {
        torch::NoGradGuard no_grad;
        e.conv2d->bias.abs_();
      }
      mha->train();
      auto x = torch::randn({2, length, kTaggerDim}).requires_grad_(true);
      auto weights = mha->parameters();
      auto out = mha(x, x, x);
      auto reference = naive_tagger_attention(x, mha->in_proj_weight, e, c.circulant);
      EXPECT_LT((d(out) - reference).abs().max().item<double>(), 2e-5) << where;

      const auto probe = torch::linspace(-1, 1, out.numel(), torch::kDouble).view(out.sizes());
      std::vector<Tensor> inputs = {x};
      for (const auto& p : weights) inputs.push_back(p);
      for (auto& t : inputs) t.mutable_grad() = Tensor();
      (d(out) * probe).sum().backward();
      const auto module_grads = grads_of(inputs);
      for (auto& t : inputs) t.mutable_grad() = Tensor();
      (naive_tagger_attention(x, mha->in_proj_weight, e, c.circulant) * probe).sum().backward();
      const auto reference_grads = grads_of(inputs);
      for (size_t i = 0; i < inputs.size(); ++i)
        EXPECT_LT((d(module_grads[i]) - d(reference_grads[i])).abs().max().item<double>(), 1e-4)
            << where << ", tensor " << i;
      for (const auto& p : weights) {
        if (p.is_same(mha->in_proj_weight)) continue;
        EXPECT_GT(p.grad().abs().sum().item<double>(), 0) << where << ": a parameter gets no gradient";
      }
    }
  }
}

TEST(TaggerEntries, RelativeBiasForms) {
  torch::manual_seed(3);
  RelativeBiasEntry directed(kTaggerHeads, kMaxPositions, false), circulant(kTaggerHeads, kMaxPositions, true);
  AttentionInputs in;
  in.q = torch::zeros({1, kMaxPositions, kTaggerHeads, kTaggerHeadDim});
  in.query_length = in.key_length = kMaxPositions;
  const auto a = directed.bias(in), s = circulant.bias(in);
  ASSERT_EQ(a.sizes(), (std::vector<int64_t>{1, kTaggerHeads, kMaxPositions, kMaxPositions}));
  // Directed: a_{i-j+t}, the same along each diagonal, different above and below it.
  EXPECT_EQ(a[0][1][4][2].item<float>(), directed.weights[1][2 + kMaxPositions].item<float>());
  EXPECT_EQ(a[0][1][5][3].item<float>(), a[0][1][4][2].item<float>());
  EXPECT_GT((a - a.transpose(2, 3)).abs().max().item<double>(), 1e-3);
  // Circulant (the authors' code): symmetric in i - j.
  EXPECT_LT((s - s.transpose(2, 3)).abs().max().item<double>(), 1e-6);
  EXPECT_EQ(s[0][0][4][2].item<float>(), s[0][0][5][3].item<float>());
}

TEST(TaggerEntries, ParametersPerHeadAndLayer) {
  const int64_t t = 60, heads = 4;
  EXPECT_EQ(count_parameters(PositionMatrixEntry(heads, t)), heads * t * t);
  EXPECT_EQ(count_parameters(RelativeBiasEntry(heads, t, false)), heads * 2 * t);
  EXPECT_EQ(count_parameters(RelativeBiasEntry(heads, t, true)), heads * 2 * t);
  EXPECT_EQ(count_parameters(TemperatureEntry(heads)), 3 * heads);
  EXPECT_EQ(count_parameters(AttentionConv1dEntry(heads, t, 3)), heads * (3 * t * t + t));
  EXPECT_EQ(count_parameters(AttentionConv2dEntry(heads, 3)), 10 * heads);
}

// Built from recipes: P and R apply at the first layer, Temp and the convolutions at
// every layer; unknown layers and sites without a fixed length are errors naming the key.
TEST(TaggerEntries, WhereEntriesApplyAndTheirErrors) {
  const auto cfg = csan::testing::recipe(
      "task: {name: tagging}\nmodel: {arch: tagger, attention: {encoder.self: [temperature, position_matrix, "
      "relative_bias, attention_conv1d, attention_conv2d]}}\n");
  auto entries_at = [&](int64_t layer) {
    AttentionSite site{"encoder.self", layer, 4, 4, 192, false, true, 60};
    std::vector<std::string> names;
    for (const auto& name : cfg.get<std::vector<std::string>>("model.attention.encoder.self"))
      if (attention_entry_registry().get(name).build(cfg, site)) names.push_back(name);
    return names;
  };
  EXPECT_EQ(entries_at(0), (std::vector<std::string>{"temperature", "position_matrix", "relative_bias",
                                                     "attention_conv1d", "attention_conv2d"}));
  EXPECT_EQ(entries_at(3), (std::vector<std::string>{"temperature", "attention_conv1d", "attention_conv2d"}));
  EXPECT_EQ(cfg.get<std::string>("model.relative_bias.form"), "directed");

  auto error_of = [](const std::string& yaml, const std::string& entry, AttentionSite site) {
    try {
      attention_entry_registry().get(entry).build(csan::testing::recipe(yaml), site);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string p_layer_9 =
      "task: {name: tagging}\nmodel: {arch: tagger, position_matrix: {layers: [9]}, attention: {encoder.self: "
      "[position_matrix]}}\n";
  EXPECT_EQ(error_of(p_layer_9, "position_matrix", {"encoder.self", 0, 4, 4, 192, false, true, 60}),
            "key 'model.position_matrix.layers': layer 9 does not exist (encoder.self has 4, numbered from 0)");
  const std::string transformer = "model: {arch: transformer_tiny, attention: {encoder.self: [position_matrix]}}\n";
  EXPECT_NE(error_of(transformer, "position_matrix", {"encoder.self", 0, 2, 4, 64, false, true, 0})
                .find("key 'model.attention.encoder.self': position_matrix needs a model whose encoder.self sequences "
                      "have a fixed maximum length"),
            std::string::npos);
  const std::string even = "task: {name: tagging}\nmodel: {arch: tagger, attention_conv2d: {width: 4}, attention: "
                           "{encoder.self: [attention_conv2d]}}\n";
  EXPECT_EQ(error_of(even, "attention_conv2d", {"encoder.self", 0, 4, 4, 192, false, true, 60}),
            "key 'model.attention_conv2d.width': must be odd ('same' padding)");
}

TEST(KerasInit, FansAndDistributions) {
  auto fans = keras_fans({5, 64, 32});  // Conv1D (width, in, out)
  EXPECT_EQ(fans.in, 320);
  EXPECT_EQ(fans.out, 160);
  fans = keras_fans({3, 3, 1, 1});
  EXPECT_EQ(fans.in, 9);
  EXPECT_EQ(fans.out, 9);
  fans = keras_fans({120});
  EXPECT_DOUBLE_EQ(fans.in, std::sqrt(120.0));
  EXPECT_DOUBLE_EQ(glorot_normal_stddev({192, 48}), std::sqrt(2.0 / 240) / 0.87962566103423978);

  torch::manual_seed(5);
  auto w = torch::empty({400, 600});
  init_glorot_normal(w, {400, 600});
  const double stddev = glorot_normal_stddev({400, 600});
  EXPECT_LE(w.abs().max().item<double>(), 2 * stddev);  // truncated at two deviations
  // The correction makes the truncated normal's deviation Glorot's sqrt(2 / (in + out)).
  EXPECT_NEAR(w.std().item<double>(), std::sqrt(2.0 / 1000), 0.01 * std::sqrt(2.0 / 1000));
  EXPECT_NEAR(w.mean().item<double>(), 0.0, 1e-3);

  auto u = torch::empty({300, 500});
  init_glorot_uniform(u, {300, 500});
  const double limit = std::sqrt(6.0 / 800);
  EXPECT_LE(u.abs().max().item<double>(), limit);
  EXPECT_NEAR(u.std().item<double>(), limit / std::sqrt(3.0), 0.01 * limit);
  init_keras_embedding(u);
  EXPECT_LE(u.abs().max().item<double>(), 0.05);
  EXPECT_GT(u.abs().max().item<double>(), 0.049);
  EXPECT_THROW(init_glorot_uniform(u, {3, 3}), Error);  // the Keras shape must fit
}

}  // namespace
