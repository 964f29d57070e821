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

}  // namespace csan::nn
