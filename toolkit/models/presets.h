// Values that several arch files share, kept in one place: the Transformer sizes
// (Vaswani et al. 2017; fairseq's transformer_wmt_en_de and transformer_vaswani_wmt_en_de_big)
// that CSAN, CCN and the locality baselines are built on.
#pragma once

#include <map>
#include <string>

#include "toolkit/core/config.h"

namespace csan::models {

using Preset = std::map<std::string, core::Value>;

// "tiny" (d 64, FFN 256, 4 heads, 2 + 2 layers, 256 positions: demo and tests), "base"
// (512, 2048, 8, 6 + 6, dropout 0.1), "big" (1024, 4096, 16, 6 + 6, dropout 0.3).
// Throws csan::Error for another name.
const Preset& transformer_size(const std::string& size);

// The NVIDIA fairseq fork's setup the CCN paper trained: pre-norm with final layer norms,
// attention projections without bias.
const Preset& prenorm_without_attention_bias();

// b's values over a's.
Preset merged(Preset a, const Preset& b);

}  // namespace csan::models
