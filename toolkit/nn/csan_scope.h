// The CSAN attention scope (Yang et al., NAACL 2019): installed on the self-attention of
// chosen layers, it makes MultiheadAttention attend over a 1-D window or a 2-D
// (positions x heads) area instead of the whole sentence. Registered as "csan" in
// scope_registry(); configured by the "model.csan.*" recipe keys.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/nn/attention_scope.h"
#include "toolkit/nn/csan_attention.h"

namespace csan::nn {

struct CsanOptions {
  CsanWindow window;
  std::vector<int64_t> encoder_layers{0, 1, 2};  // self-attention layers with the window
  std::vector<int64_t> decoder_layers;           // decoder self-attention: left-only window
  int64_t banded_from_length = 0;  // 0: the measured crossover (automatic_banded_from_length)
  CsanPath path = CsanPath::Auto;

  // Reads "model.csan.*"; throws csan::Error naming the key for an even window.
  static CsanOptions from_config(const core::Config& cfg);
};

// Declares the "model.csan.*" keys.
void declare_csan_options(core::ConfigSchema& schema);
// Their default values (window 11, area of 3 heads, truncate, encoder layers 0-2, no
// decoder layers), for arch presets.
std::map<std::string, core::Value> csan_defaults();

class CsanScope : public AttentionScope {
 public:
  // masks: shared with the other windowed layers (default: CsanMaskCache::shared()).
  CsanScope(const CsanWindow& window, int64_t banded_from_length, CsanPath path = CsanPath::Auto,
            std::shared_ptr<CsanMaskCache> masks = CsanMaskCache::shared());

  // Self-attention is computed by attend(); anything else falls back to full scope.
  torch::Tensor shape_scores(torch::Tensor scores, const ScopeContext&) override { return scores; }
  torch::Tensor attend(const HeadInputs& in, const ScopeContext& context) override;

  const CsanWindow& window() const { return window_; }

 private:
  CsanWindow window_;
  int64_t banded_from_length_;
  CsanPath path_;
  std::shared_ptr<CsanMaskCache> masks_;
};

}  // namespace csan::nn
