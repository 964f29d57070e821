// The convoluted-attention PoS tagger (Dufter, Schmitt & Schütze, COLING 2020, Table 1a;
// the authors' Keras code pdufter/convatt, models/seqlabel.py), arch family "tagger":
//   e_i = [ w_i (+ p_i | ; p_i) ; charcnn(word i) ]      word (+ position) + characters
//   h^0 = e,  h^l = drop(h^{l-1}) + [head_1 ; ... ; head_H](drop(h^{l-1}))
//   head(X) = sigma(A) X W_v,  A = X W_q (X W_k)^T / sqrt(d_h)     (Sec. 2.2)
//   y_i = softmax(W [e_i ; h^L_i] + b)
// Per-head bias-free Q/K/V, no output projection, feed-forward or layer norm. The paper's
// variants (P, R, Temp, Conv, Conv2d) are attention-chain entries of the "encoder.self"
// sites (toolkit/nn/*_entry.cpp). Sequences have the data's fixed length t (the model
// context's "positions"): every chunk is padded to t and padding slots are real inputs
// that only the loss and the metrics ignore, as in the authors' code; mask_padding hides
// them from the attention instead (a deviation from the paper).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/core/option_table.h"
#include "toolkit/models/model_context.h"
#include "toolkit/models/tagging_model.h"
#include "toolkit/nn/char_cnn.h"
#include "toolkit/nn/dense.h"

namespace csan::models {

struct TaggerOptions {
  int64_t word_dim = 128;
  std::string position_embedding = "add";  // none | add (word_dim wide) | concat (position_dim wide)
  int64_t position_dim = 64;
  int64_t char_dim = 64;
  int64_t char_filters = 64;
  int64_t char_width = 5;
  int64_t char_layers = 3;
  int64_t layers = 4;
  int64_t heads = 4;
  double dropout = 0.1;
  bool classifier_sees_input = true;  // classify [e; h^L] (the authors' residual_for_last_layer) or h^L
  bool mask_padding = false;

  // The attention width: word (+ concatenated position) + character features.
  int64_t model_dim() const;
};

// The model.tagger.* keys, each written once.
const core::OptionTable<TaggerOptions>& tagger_option_table();

class TaggerModel : public TaggingModel {
 public:
  // context: vocabularies "words", "chars", "labels" and "positions" (t); pad_index is the
  // padding word's id. Throws csan::Error naming the key when heads do not divide the width.
  TaggerModel(const TaggerOptions& options, const ModelContext& context);

  // input "words" [B, T] (T <= t), "chars" [B, T, C] -> logits [B, T, labels].
  torch::Tensor tag(const NamedTensors& input) override;
  void for_each_attention(
      const std::function<void(const nn::AttentionSite&, nn::MultiheadAttention&)>& visit) override;

  const TaggerOptions& options() const { return options_; }

 private:
  TaggerOptions options_;
  int64_t max_positions_, pad_index_;
  torch::Tensor word_embedding_, position_embedding_;
  nn::CharCnn chars_{nullptr};
  std::vector<nn::MultiheadAttention> layers_;
  nn::Dense classifier_{nullptr};
};

}  // namespace csan::models
