#include "toolkit/models/transformer_options.h"

namespace csan::models {

const core::OptionTable<TransformerOptions>& transformer_option_table() {
  using O = TransformerOptions;
  using L = nn::TransformerLayerOptions;
  auto layer = [](auto member) {
    return [member](O & o) -> auto& { return o.layer.*member; };
  };
  static const auto table =
      core::OptionTable<O>()
          .add("model.encoder_layers", &O::encoder_layers, "number of encoder layers", 1, 1000)
          .add("model.decoder_layers", &O::decoder_layers, "number of decoder layers", 1, 1000)
          .add_ref<int64_t>("model.embed_dim", layer(&L::embed_dim), "embedding and model dimension", 1)
          .add_ref<int64_t>("model.ffn_dim", layer(&L::ffn_dim), "feed-forward inner dimension", 1)
          .add_ref<int64_t>("model.heads", layer(&L::heads), "attention heads (must divide embed_dim)", 1)
          .add_ref<double>("model.dropout", layer(&L::dropout), "dropout on embeddings and sublayer outputs", 0.0, 1.0)
          .add_ref<double>("model.attention_dropout", layer(&L::attention_dropout), "dropout on attention weights", 0.0,
                           1.0)
          .add_ref<double>("model.activation_dropout", layer(&L::activation_dropout),
                           "dropout after the feed-forward activation", 0.0, 1.0)
          .add_ref<std::string>("model.activation", layer(&L::activation), "feed-forward activation (swish: SiLU)",
                                std::nullopt, std::nullopt, {"relu", "gelu", "swish"})
          .add_ref<bool>("model.normalize_before", layer(&L::normalize_before),
                         "pre-norm layers (with final encoder/decoder layer norms)")
          .add_ref<bool>("model.attn_bias", layer(&L::attention_bias),
                         "biases in the attention projections (false: NVIDIA fairseq fork)")
          .add("model.learned_pos", &O::learned_pos, "learned instead of sinusoidal positional embeddings")
          .add("model.sinusoidal_layout", &O::sinusoidal_layout,
               "sinusoidal position table: fairseq's (positions from padding_idx + 1) or Marian's (from 0, "
               "sin/cos frequencies 10000^(-2k/d))",
               {"fairseq", "marian"})
          .add("model.layernorm_embedding", &O::layernorm_embedding,
               "layer norm of embeddings + positions on both sides (fairseq's --layernorm-embedding)")
          .add("model.no_scale_embedding", &O::no_scale_embedding, "do not scale token embeddings by sqrt(embed_dim)")
          .add("model.share_decoder_input_output_embed", &O::share_decoder_input_output_embed,
               "tie the decoder's embedding and output projection")
          .add("model.share_all_embeddings", &O::share_all_embeddings,
               "one embedding for encoder, decoder and output (needs a joined dictionary)")
          .add("model.final_logits_bias", &O::final_logits_bias,
               "a learned bias on the output logits (decoder.final_logits_bias; Marian's)")
          .add("model.decoder_start", &O::decoder_start,
               "the decoder's first input token: eos (fairseq) or pad (Marian's decoder_start_token_id)",
               {"eos", "pad"})
          .add("model.max_source_positions", &O::max_source_positions, "longest source sentence in tokens", 1)
          .add("model.max_target_positions", &O::max_target_positions, "longest target sentence in tokens", 1);
  return table;
}

TransformerOptions TransformerOptions::from_config(const core::Config& cfg) {
  return transformer_option_table().read(cfg);
}

const std::vector<std::string>& transformer_attention_roles() {
  static const std::vector<std::string> roles = {"encoder.self", "decoder.self", "decoder.cross"};
  return roles;
}

}  // namespace csan::models
