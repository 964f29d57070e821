#include "toolkit/models/presets.h"

#include "toolkit/core/error.h"

namespace csan::models {

const Preset& transformer_size(const std::string& size) {
  static const std::map<std::string, Preset> sizes = {
      {"tiny",
       {{"model.embed_dim", int64_t{64}},
        {"model.ffn_dim", int64_t{256}},
        {"model.heads", int64_t{4}},
        {"model.encoder_layers", int64_t{2}},
        {"model.decoder_layers", int64_t{2}},
        {"model.dropout", 0.1},
        {"model.max_source_positions", int64_t{256}},
        {"model.max_target_positions", int64_t{256}}}},
      {"base",
       {{"model.embed_dim", int64_t{512}},
        {"model.ffn_dim", int64_t{2048}},
        {"model.heads", int64_t{8}},
        {"model.encoder_layers", int64_t{6}},
        {"model.decoder_layers", int64_t{6}},
        {"model.dropout", 0.1}}},
      {"big",
       {{"model.embed_dim", int64_t{1024}},
        {"model.ffn_dim", int64_t{4096}},
        {"model.heads", int64_t{16}},
        {"model.encoder_layers", int64_t{6}},
        {"model.decoder_layers", int64_t{6}},
        {"model.dropout", 0.3}}},
  };
  auto it = sizes.find(size);
  if (it == sizes.end()) throw Error("unknown Transformer size '" + size + "' (tiny, base, big)");
  return it->second;
}

const Preset& prenorm_without_attention_bias() {
  static const Preset preset = {{"model.normalize_before", true}, {"model.attn_bias", false}};
  return preset;
}

Preset merged(Preset a, const Preset& b) {
  for (const auto& [k, v] : b) a[k] = v;
  return a;
}

}  // namespace csan::models
