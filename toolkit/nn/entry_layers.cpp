#include "toolkit/nn/entry_layers.h"

#include <algorithm>

#include "toolkit/core/error.h"

namespace csan::nn {

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
