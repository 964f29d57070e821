// What several attention entries check about their site: the layers their `layers` key
// lists, and the fixed sequence length their parameters are sized by.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/nn/attention_site.h"

namespace csan::nn {

// Whether an entry whose `key` lists `layers` applies at `site` (an empty list: every
// layer). Throws csan::Error naming `key` for a layer the site's role does not have.
bool entry_applies_at(const std::vector<int64_t>& layers, const AttentionSite& site, const std::string& key);

// site.max_positions (the t of t x t parameters); throws csan::Error naming the entry's
// chain key for a site whose sequences have no fixed maximum length.
int64_t fixed_positions(const AttentionSite& site, const std::string& entry);

}  // namespace csan::nn
