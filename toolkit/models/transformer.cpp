#include "toolkit/models/transformer.h"

#include "toolkit/core/error.h"
#include "toolkit/models/token_embedding.h"

namespace csan::models {

TransformerModel::TransformerModel(const TransformerOptions& options, const ModelContext& context) : options_(options) {
  const int64_t d = options.layer.embed_dim, pad = context.pad_index;
  const int64_t src_vocab = context.vocab_size("source"), tgt_vocab = context.vocab_size("target");
  if (options.share_all_embeddings) {
    if (!context.joined_dictionary || src_vocab != tgt_vocab)
      throw Error::for_key("model.share_all_embeddings",
                           "requires a joined dictionary (preprocess with --joined-dictionary)");
    TokenEmbedding shared(src_vocab, d, pad);
    encoder = register_module("encoder", TransformerEncoder(options, shared, pad));
    decoder = register_module("decoder", TransformerDecoder(options, shared, /*owned_elsewhere=*/true, pad));
  } else {
    encoder = register_module("encoder", TransformerEncoder(options, TokenEmbedding(src_vocab, d, pad), pad));
    decoder = register_module("decoder", TransformerDecoder(options, TokenEmbedding(tgt_vocab, d, pad), false, pad));
  }
}

EncoderOut TransformerModel::encode(const NamedTensors& input) { return encoder(input.at("src_tokens")); }

torch::Tensor TransformerModel::decode(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                                       nn::IncrementalState* state) {
  return decoder(prev_output_tokens, encoder_out, state);
}

torch::Tensor TransformerModel::forward_positions(const NamedTensors& input, const torch::Tensor& positions) {
  return decoder(input.at("prev_output_tokens"), encode(input), nullptr, positions);
}

void TransformerModel::for_each_attention(
    const std::function<void(const nn::AttentionSite&, nn::MultiheadAttention&)>& visit) {
  const int64_t heads = options_.layer.heads, d = options_.layer.embed_dim;
  const auto encoder_layers = static_cast<int64_t>(encoder->layers->size());
  const auto decoder_layers = static_cast<int64_t>(decoder->layers->size());
  for (int64_t i = 0; i < encoder_layers; ++i) {
    auto layer = encoder->layers[i]->as<nn::EncoderLayer>();
    visit({"encoder.self", i, encoder_layers, heads, d, /*causal=*/false, /*self=*/true}, layer->self_attn);
  }
  for (int64_t i = 0; i < decoder_layers; ++i) {
    auto layer = decoder->layers[i]->as<nn::DecoderLayer>();
    visit({"decoder.self", i, decoder_layers, heads, d, /*causal=*/true, /*self=*/true}, layer->self_attn);
    visit({"decoder.cross", i, decoder_layers, heads, d, /*causal=*/false, /*self=*/false}, layer->encoder_attn);
  }
}

}  // namespace csan::models
