// The CSAN attention entry (Yang et al., NAACL 2019), registered as "csan": at the
// self-attention of chosen layers it makes MultiheadAttention attend over a 1-D window
// or a 2-D (positions x heads) area instead of the whole sentence. It computes the
// attention itself (toolkit/nn/csan_attention.h) rather than adding a bias: the 2-D area
// spans neighbouring heads, which no per-head [Tq, Tk] bias can express, and long
// sentences take the banded O(I*M) path instead of an O(I^2) masked one. Other entries'
// biases in the same chain are added to its window scores.
// Keys model.csan.*; they have values only in recipes whose chains name csan.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"
#include "toolkit/nn/csan_attention.h"

namespace csan::nn {

struct CsanOptions {
  // The paper's best setting as the default: 2-D, 11 positions x 3 heads (the first
  // author's code); the csan1d_* presets set head_window 1.
  CsanWindow window{11, 3, HeadBoundary::Truncate};
  std::vector<int64_t> encoder_layers{0, 1, 2};  // self-attention layers with the window
  std::vector<int64_t> decoder_layers;           // decoder self-attention: left-only window
  int64_t banded_from_length = 0;                // 0: the measured crossover (automatic_banded_from_length)
  CsanPath path = CsanPath::Auto;

  // Reads "model.csan.*"; throws csan::Error naming the key for an even window.
  static CsanOptions from_config(const core::Config& cfg);
};

// The model.csan.* keys, each written once.
const core::OptionTable<CsanOptions>& csan_option_table();

class CsanEntry : public AttentionEntry {
 public:
  // masks: shared with the other windowed layers (default: CsanMaskCache::shared()).
  CsanEntry(const CsanWindow& window, int64_t banded_from_length, CsanPath path = CsanPath::Auto,
            std::shared_ptr<CsanMaskCache> masks = CsanMaskCache::shared());

  unsigned uses() const override { return kComputes; }
  torch::Tensor attend(const HeadInputs& in, const ScopeContext& context, const torch::Tensor& bias) override;

  const CsanWindow& window() const { return window_; }

 private:
  CsanWindow window_;
  int64_t banded_from_length_;
  CsanPath path_;
  std::shared_ptr<CsanMaskCache> masks_;
};

}  // namespace csan::nn
