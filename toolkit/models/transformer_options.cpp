#include "toolkit/models/transformer_options.h"

namespace csan::models {

void declare_transformer_options(core::ConfigSchema& s) {
  s.add_int("model.encoder_layers", 6, "number of encoder layers", 1, 1000);
  s.add_int("model.decoder_layers", 6, "number of decoder layers", 1, 1000);
  s.add_int("model.embed_dim", 512, "embedding and model dimension", 1);
  s.add_int("model.ffn_dim", 2048, "feed-forward inner dimension", 1);
  s.add_int("model.heads", 8, "attention heads (must divide embed_dim)", 1);
  s.add_double("model.dropout", 0.1, "dropout on embeddings and sublayer outputs", 0.0, 1.0);
  s.add_double("model.attention_dropout", 0.0, "dropout on attention weights", 0.0, 1.0);
  s.add_double("model.activation_dropout", 0.0, "dropout after the feed-forward activation", 0.0, 1.0);
  s.add_string("model.activation", "relu", "feed-forward activation", {"relu", "gelu"});
  s.add_bool("model.normalize_before", false, "pre-norm layers (with final encoder/decoder layer norms)");
  s.add_bool("model.attn_bias", true, "biases in the attention projections (false: NVIDIA fairseq fork)");
  s.add_bool("model.learned_pos", false, "learned instead of sinusoidal positional embeddings");
  s.add_bool("model.no_scale_embedding", false, "do not scale token embeddings by sqrt(embed_dim)");
  s.add_bool("model.share_decoder_input_output_embed", false, "tie the decoder's embedding and output projection");
  s.add_bool("model.share_all_embeddings", false,
             "one embedding for encoder, decoder and output (needs a joined dictionary)");
  s.add_int("model.max_source_positions", 1024, "longest source sentence in tokens", 1);
  s.add_int("model.max_target_positions", 1024, "longest target sentence in tokens", 1);
}

TransformerOptions TransformerOptions::from_config(const core::Config& cfg) {
  TransformerOptions o;
  o.encoder_layers = cfg.get<int64_t>("model.encoder_layers");
  o.decoder_layers = cfg.get<int64_t>("model.decoder_layers");
  o.layer.embed_dim = cfg.get<int64_t>("model.embed_dim");
  o.layer.ffn_dim = cfg.get<int64_t>("model.ffn_dim");
  o.layer.heads = cfg.get<int64_t>("model.heads");
  o.layer.dropout = cfg.get<double>("model.dropout");
  o.layer.attention_dropout = cfg.get<double>("model.attention_dropout");
  o.layer.activation_dropout = cfg.get<double>("model.activation_dropout");
  o.layer.activation = cfg.get<std::string>("model.activation");
  o.layer.normalize_before = cfg.get<bool>("model.normalize_before");
  o.layer.attention_bias = cfg.get<bool>("model.attn_bias");
  o.learned_pos = cfg.get<bool>("model.learned_pos");
  o.no_scale_embedding = cfg.get<bool>("model.no_scale_embedding");
  o.share_decoder_input_output_embed = cfg.get<bool>("model.share_decoder_input_output_embed");
  o.share_all_embeddings = cfg.get<bool>("model.share_all_embeddings");
  o.max_source_positions = cfg.get<int64_t>("model.max_source_positions");
  o.max_target_positions = cfg.get<int64_t>("model.max_target_positions");
  return o;
}

}  // namespace csan::models
