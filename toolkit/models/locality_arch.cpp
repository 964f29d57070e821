// Registers the seven locality baselines of CSAN's Table 1 (Yang et al., NAACL 2019) as
// presets locality_<method>_{tiny,base,big}: the Transformer preset of that size plus the
// method's attention entry (toolkit/nn/<method>_entry.h) where CSAN's authors applied it.
//   bi_direct, neighbor, local_hard, local_soft, cnns: the lowest three encoder layers
//     (the paper's setting, Section 5); local_hard keeps half the heads global.
//   rel_pos: every attention of the model, encoder and decoder self-attention and the
//     decoder's attention over the source, k = 16 (the first author's models/transformer_pos.py).
//   block: every encoder layer, blocks of 4 (the first author's models/transformer_block.py).
// The tiny presets (2 + 2 layers, 4 heads) put the lowest-three methods on encoder layer 0.
#include <string>
#include <vector>

#include "toolkit/models/model_registry.h"
#include "toolkit/models/presets.h"
#include "toolkit/models/transformer.h"

CSAN_REGISTRATION_ANCHOR(locality_arch)

namespace csan::models {

ArchSpec transformer_family(Preset preset);  // transformer_arch.cpp

namespace {

using Layers = std::vector<int64_t>;
using Chain = std::vector<std::string>;

Preset locality(const std::string& method, const std::string& size) {
  const Preset& model = transformer_size(size);
  const int64_t layers = std::get<int64_t>(model.at("model.encoder_layers"));
  Layers all;
  for (int64_t i = 0; i < layers; ++i) all.push_back(i);
  const Layers lowest = size == "tiny" ? Layers{0} : Layers{0, 1, 2};
  const std::string prefix = "model." + method + ".";
  Preset p = {{"model.attention.encoder.self", Chain{method}}, {prefix + "encoder_layers", lowest}};
  if (method == "rel_pos") {
    p["model.attention.decoder.self"] = Chain{method};
    p["model.attention.decoder.cross"] = Chain{method};
    p[prefix + "clip"] = int64_t{16};
    p[prefix + "encoder_layers"] = p[prefix + "decoder_layers"] = p[prefix + "cross_layers"] = all;
  } else if (method == "block") {
    p[prefix + "size"] = int64_t{4};
    p[prefix + "encoder_layers"] = all;
  } else if (method == "local_hard") {
    // Half the heads local: Table 1's +0.4M at base size (docs/architectures.md, "Where the parameters differ from Table 1").
    p[prefix + "global_heads"] = std::get<int64_t>(model.at("model.heads")) / 2;
    p[prefix + "window"] = int64_t{10};
  } else if (method == "local_soft") {
    p[prefix + "global_heads"] = int64_t{0};
  } else if (method == "bi_direct") {
    p[prefix + "global_heads"] = int64_t{0};
  } else if (method == "cnns") {
    p[prefix + "kernel_size"] = int64_t{7};
    p[prefix + "conv_layers"] = int64_t{4};
  }
  return merged(model, p);
}

ArchSpec arch(const std::string& method, const std::string& size) { return transformer_family(locality(method, size)); }

// clang-format off
core::Registrar<ArchSpec> bi_direct_tiny(arch_registry(), "locality_bi_direct_tiny", arch("bi_direct", "tiny"));
core::Registrar<ArchSpec> bi_direct_base(arch_registry(), "locality_bi_direct_base", arch("bi_direct", "base"));
core::Registrar<ArchSpec> bi_direct_big(arch_registry(), "locality_bi_direct_big", arch("bi_direct", "big"));
core::Registrar<ArchSpec> rel_pos_tiny(arch_registry(), "locality_rel_pos_tiny", arch("rel_pos", "tiny"));
core::Registrar<ArchSpec> rel_pos_base(arch_registry(), "locality_rel_pos_base", arch("rel_pos", "base"));
core::Registrar<ArchSpec> rel_pos_big(arch_registry(), "locality_rel_pos_big", arch("rel_pos", "big"));
core::Registrar<ArchSpec> neighbor_tiny(arch_registry(), "locality_neighbor_tiny", arch("neighbor", "tiny"));
core::Registrar<ArchSpec> neighbor_base(arch_registry(), "locality_neighbor_base", arch("neighbor", "base"));
core::Registrar<ArchSpec> neighbor_big(arch_registry(), "locality_neighbor_big", arch("neighbor", "big"));
core::Registrar<ArchSpec> local_hard_tiny(arch_registry(), "locality_local_hard_tiny", arch("local_hard", "tiny"));
core::Registrar<ArchSpec> local_hard_base(arch_registry(), "locality_local_hard_base", arch("local_hard", "base"));
core::Registrar<ArchSpec> local_hard_big(arch_registry(), "locality_local_hard_big", arch("local_hard", "big"));
core::Registrar<ArchSpec> local_soft_tiny(arch_registry(), "locality_local_soft_tiny", arch("local_soft", "tiny"));
core::Registrar<ArchSpec> local_soft_base(arch_registry(), "locality_local_soft_base", arch("local_soft", "base"));
core::Registrar<ArchSpec> local_soft_big(arch_registry(), "locality_local_soft_big", arch("local_soft", "big"));
core::Registrar<ArchSpec> block_tiny(arch_registry(), "locality_block_tiny", arch("block", "tiny"));
core::Registrar<ArchSpec> block_base(arch_registry(), "locality_block_base", arch("block", "base"));
core::Registrar<ArchSpec> block_big(arch_registry(), "locality_block_big", arch("block", "big"));
core::Registrar<ArchSpec> cnns_tiny(arch_registry(), "locality_cnns_tiny", arch("cnns", "tiny"));
core::Registrar<ArchSpec> cnns_base(arch_registry(), "locality_cnns_base", arch("cnns", "base"));
core::Registrar<ArchSpec> cnns_big(arch_registry(), "locality_cnns_big", arch("cnns", "big"));
// clang-format on

}  // namespace

}  // namespace csan::models
