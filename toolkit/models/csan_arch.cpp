// Registers "csan" and its presets: the Transformer with convolutional self-attention
// (Yang et al., NAACL 2019) in the lowest encoder layers. Parameter-free: a csan preset
// is its Transformer preset plus the "csan" attention entry in the self-attention chains
// (toolkit/nn/csan_entry.h), which applies at the layers model.csan.{encoder,decoder}_layers
// list (default: encoder layers 0-2, no decoder layer).
//   csan1d_*: window of M+1 = 11 positions;  csan2d_*: area of 11 positions x 3 heads.
#include <string>
#include <vector>

#include "toolkit/models/model_registry.h"
#include "toolkit/models/presets.h"
#include "toolkit/models/transformer.h"

CSAN_REGISTRATION_ANCHOR(csan_arch)

namespace csan::models {

ArchSpec transformer_family(Preset preset);  // transformer_arch.cpp

namespace {

Preset csan(const std::string& size, int64_t head_window) {
  Preset chains = {{"model.attention.encoder.self", std::vector<std::string>{"csan"}},
                   {"model.attention.decoder.self", std::vector<std::string>{"csan"}}};
  if (size.empty()) return chains;  // "csan": the entry's defaults (2-D, 11 x 3)
  Preset window = {{"model.csan.window", int64_t{11}}, {"model.csan.head_window", head_window}};
  // The tiny models have two encoder layers; the window goes on the lower one.
  if (size == "tiny") window["model.csan.encoder_layers"] = std::vector<int64_t>{0};
  return merged(merged(transformer_size(size), chains), window);
}

core::Registrar<ArchSpec> csan_plain(arch_registry(), "csan", transformer_family(csan("", 0)));
core::Registrar<ArchSpec> tiny1d(arch_registry(), "csan1d_tiny", transformer_family(csan("tiny", 1)));
core::Registrar<ArchSpec> tiny2d(arch_registry(), "csan2d_tiny", transformer_family(csan("tiny", 3)));
core::Registrar<ArchSpec> base1d(arch_registry(), "csan1d_base", transformer_family(csan("base", 1)));
core::Registrar<ArchSpec> base2d(arch_registry(), "csan2d_base", transformer_family(csan("base", 3)));
core::Registrar<ArchSpec> big1d(arch_registry(), "csan1d_big", transformer_family(csan("big", 1)));
core::Registrar<ArchSpec> big2d(arch_registry(), "csan2d_big", transformer_family(csan("big", 3)));

}  // namespace

}  // namespace csan::models
