// What several attention entries check about their site: the layers their `layers` key
// lists, the fixed sequence length their parameters are sized by, and how convolutions over
// the probabilities keep padding hidden.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/nn/attention_entry.h"
#include "toolkit/nn/attention_site.h"

namespace csan::nn {

// Whether an entry whose `key` lists `layers` applies at `site` (an empty list: every
// layer). Throws csan::Error naming `key` for a layer the site's role does not have.
bool entry_applies_at(const std::vector<int64_t>& layers, const AttentionSite& site, const std::string& key);

// site.max_positions (the t of t x t parameters); throws csan::Error naming the entry's
// chain key for a site whose sequences have no fixed maximum length.
int64_t fixed_positions(const AttentionSite& site, const std::string& entry);

// A convolution over softmax probabilities [B, H, Tq, Tk] mixes neighbouring queries and
// keys, so under a key padding mask (the tagger's mask_padding) it would carry padded
// queries' rows into real rows and spread weight onto padded keys. The entry zeroes padded
// self-attention queries' rows before convolving and padded keys' columns after; without a
// mask both return probs unchanged.
torch::Tensor zero_padded_queries(const torch::Tensor& probs, const AttentionInputs& in);
torch::Tensor zero_padded_keys(const torch::Tensor& probs, const AttentionInputs& in);

}  // namespace csan::nn
