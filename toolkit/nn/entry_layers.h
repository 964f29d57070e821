// Where an attention entry applies: its recipe keys list layers per kind of site
// (model.<entry>.encoder_layers for non-causal self-attention, decoder_layers for causal
// self-attention, cross_layers for attention over another sequence), and its factory
// asks applies_at() for each site. An entry that cannot serve a kind of site (a backward
// mask in a causal decoder) leaves that list out, and a chain that puts it there is an
// error naming the chain's key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/nn/attention_site.h"

namespace csan::nn {

struct EntryLayers {
  std::string entry;  // the entry's registered name, e.g. "rel_pos"
  const std::vector<int64_t>* encoder = nullptr;
  const std::vector<int64_t>* decoder = nullptr;
  const std::vector<int64_t>* cross = nullptr;
  // Why a missing list's sites cannot have the entry, for the error.
  std::string no_decoder = "is not causal";
  std::string no_cross = "needs queries and keys from one sequence";
};

// True when the site's layer is in the list for its kind of site. Throws csan::Error
// naming model.attention.<role> for a kind the entry cannot serve, and naming the list's
// key for a layer the model does not have.
bool applies_at(const EntryLayers& layers, const AttentionSite& site);

// Throws csan::Error naming `key` when a layer of `layers` is not below `count`.
void check_layers_exist(const std::string& key, const std::vector<int64_t>& layers, int64_t count);

}  // namespace csan::nn
