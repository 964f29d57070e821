// Positions as fairseq numbers them: padding gets padding_idx (and a zero vector),
// the t-th real token gets padding_idx + 1 + t (or as Marian does: the t-th token gets t). Sinusoidal (the default: no
// parameters, the table grows on demand) or learned (max_positions + padding_idx + 1
// rows, a parameter).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <mutex>

namespace csan::nn {

// tokens [B, T] -> positions [B, T]; `start` counts tokens already decoded (incremental).
torch::Tensor make_positions(const torch::Tensor& tokens, int64_t padding_idx, int64_t start = 0);

// fairseq's SinusoidalPositionalEmbedding.get_embedding: row p is
// [sin(p * w_0) .. sin(p * w_{h-1}), cos(p * w_0) .. cos(p * w_{h-1})] with h = dim / 2,
// w_i = exp(-i * ln(10000) / (h - 1)); a zero column if dim is odd; row padding_idx zero.
torch::Tensor sinusoidal_table(int64_t num_embeddings, int64_t dim, int64_t padding_idx);

// Marian's (transformers' MarianSinusoidalPositionalEmbedding): row p, column j has the
// angle p / 10000^(2 * (j / 2) / dim); the first ceil(dim / 2) columns are sin of the even
// j, the rest cos of the odd j. No padding row.
torch::Tensor marian_sinusoidal_table(int64_t num_embeddings, int64_t dim);

struct PositionalEmbeddingOptions {
  int64_t max_positions = 1024;
  int64_t embed_dim = 512;
  int64_t padding_idx = 1;
  bool learned = false;
  // Marian's sinusoidal table, read at rows start, start + 1, ... whatever the tokens (its
  // batches are right-padded, so padding shifts nothing).
  bool marian = false;
};

class PositionalEmbeddingImpl : public torch::nn::Module {
 public:
  explicit PositionalEmbeddingImpl(const PositionalEmbeddingOptions& options);
  // tokens [B, T] -> [B, T, D].
  torch::Tensor forward(const torch::Tensor& tokens, int64_t start = 0);

  torch::Tensor weight;  // learned only

 private:
  // The sinusoidal table with at least `needed` rows, on `device` (grown or moved once).
  torch::Tensor sinusoidal_rows(int64_t needed, const torch::Device& device);

  PositionalEmbeddingOptions options_;
  torch::Tensor table_;  // sinusoidal only; not a parameter
  std::mutex table_mutex_;
};
TORCH_MODULE(PositionalEmbedding);

}  // namespace csan::nn
