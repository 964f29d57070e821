#include "toolkit/nn/entry_layers.h"

#include <algorithm>

#include "toolkit/core/error.h"

namespace csan::nn {

bool entry_applies_at(const std::vector<int64_t>& layers, const AttentionSite& site, const std::string& key) {
  for (int64_t layer : layers)
    if (layer < 0 || layer >= site.layer_count)
      throw Error::for_key(key, "layer " + std::to_string(layer) + " does not exist (" + site.role + " has " +
                                    std::to_string(site.layer_count) + ", numbered from 0)");
  return layers.empty() || std::find(layers.begin(), layers.end(), site.layer) != layers.end();
}

int64_t fixed_positions(const AttentionSite& site, const std::string& entry) {
  if (site.max_positions > 0) return site.max_positions;
  throw Error::for_key("model.attention." + site.role, entry + " needs a model whose " + site.role +
                                                           " sequences have a fixed maximum length (the tagger's)");
}

torch::Tensor zero_padded_queries(const torch::Tensor& probs, const AttentionInputs& in) {
  const torch::Tensor& mask = in.key_padding_mask;
  // Only self-attention over the whole sequence has queries at the keys' positions.
  if (!mask.defined() || (in.site && !in.site->self_attention) || in.query_offset != 0 || probs.size(2) != mask.size(1))
    return probs;
  return probs.masked_fill(mask.view({mask.size(0), 1, mask.size(1), 1}), 0.0);
}

torch::Tensor zero_padded_keys(const torch::Tensor& probs, const AttentionInputs& in) {
  const torch::Tensor& mask = in.key_padding_mask;
  if (!mask.defined()) return probs;
  return probs.masked_fill(mask.view({mask.size(0), 1, 1, mask.size(1)}), 0.0);
}

void check_layers_exist(const std::string& key, const std::vector<int64_t>& layers, int64_t count) {
  for (int64_t layer : layers)
    if (layer >= count)
      throw Error::for_key(key, "layer " + std::to_string(layer) + " does not exist (there are " +
                                    std::to_string(count) + ", numbered from 0)");
}

bool applies_at(const EntryLayers& layers, const AttentionSite& site) {
  const std::vector<int64_t>* list = layers.encoder;
  std::string kind = "encoder_layers", why_not;
  if (!site.self_attention) {
    list = layers.cross, kind = "cross_layers", why_not = layers.no_cross;
  } else if (site.causal) {
    list = layers.decoder, kind = "decoder_layers", why_not = layers.no_decoder;
  }
  if (!list) throw Error::for_key("model.attention." + site.role, layers.entry + " " + why_not);
  check_layers_exist("model." + layers.entry + "." + kind, *list, site.layer_count);
  return std::find(list->begin(), list->end(), site.layer) != list->end();
}

}  // namespace csan::nn
