#include "toolkit/models/tagger_model.h"

#include "toolkit/core/error.h"
#include "toolkit/nn/fused_dropout.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/keras_init.h"

namespace csan::models {

int64_t TaggerOptions::model_dim() const {
  return word_dim + (position_embedding == "concat" ? position_dim : 0) + char_filters;
}

const core::OptionTable<TaggerOptions>& tagger_option_table() {
  using O = TaggerOptions;
  static const auto table =
      core::OptionTable<O>()
          .add("model.tagger.word_dim", &O::word_dim, "tagger: word embedding size", 1)
          .add("model.tagger.position_embedding", &O::position_embedding,
               "tagger: learned position embeddings none, add (SAN+PE[add], word_dim wide) or concat (SAN+PE[con], "
               "position_dim wide)",
               {"none", "add", "concat"})
          .add("model.tagger.position_dim", &O::position_dim, "tagger: concatenated position embedding size", 1)
          .add("model.tagger.char_dim", &O::char_dim, "tagger: character embedding size", 1)
          .add("model.tagger.char_filters", &O::char_filters, "tagger: filters of each character convolution", 1)
          .add("model.tagger.char_width", &O::char_width, "tagger: character convolution width (odd)", 1)
          .add("model.tagger.char_layers", &O::char_layers, "tagger: character convolutions", 1)
          .add("model.tagger.layers", &O::layers, "tagger: self-attention layers", 1)
          .add("model.tagger.heads", &O::heads, "tagger: heads per layer (they divide the width)", 1)
          .add("model.tagger.dropout", &O::dropout, "tagger: dropout on each attention layer's input", 0.0, 1.0)
          .add("model.tagger.classifier_sees_input", &O::classifier_sees_input,
               "tagger: classify [embeddings; last layer] (the authors' code) instead of the last layer")
          .add("model.tagger.mask_padding", &O::mask_padding,
               "tagger: hide padding slots from the attention (a deviation: the paper's padding slots are inputs)");
  return table;
}

TaggerModel::TaggerModel(const TaggerOptions& o, const ModelContext& context)
    : options_(o), max_positions_(context.vocab_size("positions")), pad_index_(context.pad_index) {
  const int64_t d = o.model_dim();
  if (d % o.heads != 0)
    throw Error::for_key("model.tagger.heads", std::to_string(o.heads) + " heads do not divide the width " +
                                                   std::to_string(d) + " (word_dim + char_filters" +
                                                   (o.position_embedding == "concat" ? " + position_dim)" : ")"));
  word_embedding_ = register_parameter("word_embedding", torch::empty({context.vocab_size("words"), o.word_dim}));
  nn::init_keras_embedding(word_embedding_);
  if (o.position_embedding != "none") {
    const int64_t width = o.position_embedding == "add" ? o.word_dim : o.position_dim;
    position_embedding_ = register_parameter("position_embedding", torch::empty({max_positions_, width}));
    nn::init_keras_embedding(position_embedding_);
  }
  chars_ = register_module("chars", nn::CharCnn(nn::CharCnnOptions{context.vocab_size("chars"), o.char_dim,
                                                                   o.char_filters, o.char_width, o.char_layers}));
  const int64_t head_dim = d / o.heads;
  torch::nn::ModuleList layers;
  for (int64_t l = 0; l < o.layers; ++l) {
    nn::MultiheadAttentionOptions attention{d, o.heads, 0.0, /*bias=*/false};
    attention.output_projection = false;
    nn::MultiheadAttention layer(attention);
    // Each head's W_q, W_k, W_v is its own Keras (d, d_h) glorot_normal weight.
    for (int64_t m = 0; m < 3; ++m)
      for (int64_t h = 0; h < o.heads; ++h)
        nn::init_glorot_normal(layer->in_proj_weight.narrow(0, m * d + h * head_dim, head_dim), {d, head_dim});
    layers->push_back(layer);
    layers_.push_back(layer);
  }
  register_module("layers", layers);
  const int64_t classifier_in = o.classifier_sees_input ? 2 * d : d;
  const int64_t labels = context.vocab_size("labels");
  classifier_ = register_module("classifier", nn::Dense(classifier_in, labels));
  nn::init_glorot_uniform(classifier_->weight, {classifier_in, labels});
  nn::init_constant(classifier_->bias, 0.0);
}

torch::Tensor TaggerModel::tag(const NamedTensors& input) {
  const torch::Tensor& words = input.at("words");
  const int64_t length = words.size(1);
  if (length > max_positions_)
    throw Error("tagger: " + std::to_string(length) + " positions, but the model has " +
                std::to_string(max_positions_) + " (the data's chunk length)");
  auto embedded = word_embedding_.index_select(0, words.reshape({-1})).view({words.size(0), length, -1});
  if (position_embedding_.defined()) {
    auto positions = position_embedding_.narrow(0, 0, length).unsqueeze(0);
    embedded = options_.position_embedding == "add"
                   ? embedded + positions
                   : torch::cat({embedded, positions.expand({words.size(0), length, positions.size(2)})}, -1);
  }
  embedded = torch::cat({embedded, chars_(input.at("chars"))}, -1);

  nn::AttentionCall call;
  if (options_.mask_padding) call.key_padding_mask = words.eq(pad_index_);
  torch::Tensor hidden = embedded;
  for (auto& layer : layers_) {
    if (is_training() && options_.dropout > 0) hidden = nn::fused_dropout(hidden, options_.dropout);
    hidden = hidden + layer(hidden, hidden, hidden, call);
  }
  return classifier_(options_.classifier_sees_input ? torch::cat({embedded, hidden}, -1) : hidden);
}

void TaggerModel::for_each_attention(
    const std::function<void(const nn::AttentionSite&, nn::MultiheadAttention&)>& visit) {
  const auto count = static_cast<int64_t>(layers_.size());
  for (int64_t l = 0; l < count; ++l)
    visit({"encoder.self", l, count, options_.heads, options_.model_dim(), false, true, max_positions_}, layers_[l]);
}

}  // namespace csan::models
