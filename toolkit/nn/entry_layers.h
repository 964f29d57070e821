// What attention entries check about their site. Two ways to say where an entry applies:
// a `layers` key listing layers of any role (entry_applies_at: the tagger's entries), or
// lists per kind of site (EntryLayers: model.<entry>.encoder_layers for non-causal
// self-attention, decoder_layers for causal self-attention, cross_layers for attention over
// another sequence; the locality entries and CSAN) where an entry that cannot serve a kind
// of site leaves that list out, and a chain that puts it there is an error naming the
// chain's key. Also: the fixed sequence length t x t parameters are sized by, and how
// convolutions over the probabilities keep padding hidden.
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
