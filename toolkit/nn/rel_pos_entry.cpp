#include "toolkit/nn/rel_pos_entry.h"

#include <memory>

#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/init.h"

CSAN_REGISTRATION_ANCHOR(rel_pos_entry)

namespace csan::nn {

const core::OptionTable<RelPosOptions>& rel_pos_option_table() {
  static const auto table =
      core::OptionTable<RelPosOptions>()
          .add("model.rel_pos.clip", &RelPosOptions::clip,
               "REL_POS: k, relative distances are clipped to [-k, k-1] (2k embeddings shared by the heads)", 1)
          .add("model.rel_pos.encoder_layers", &RelPosOptions::encoder_layers,
               "REL_POS: encoder layers (0 = lowest) whose self-attention uses relative positions", 0)
          .add("model.rel_pos.decoder_layers", &RelPosOptions::decoder_layers,
               "REL_POS: decoder layers whose self-attention uses relative positions", 0)
          .add("model.rel_pos.cross_layers", &RelPosOptions::cross_layers,
               "REL_POS: decoder layers whose attention over the source uses relative positions", 0);
  return table;
}

RelPosOptions RelPosOptions::from_config(const core::Config& cfg) { return rel_pos_option_table().read(cfg); }

RelPosEntry::RelPosEntry(int64_t head_dim, int64_t clip) : head_dim_(head_dim), clip_(clip) {
  table = register_parameter("table", torch::empty({2 * clip, 2 * head_dim}));
  init_xavier_uniform(table);
}

torch::Tensor RelPosEntry::rows(const AttentionInputs& in) const {
  const torch::Tensor distance = in.key_positions().unsqueeze(0) - in.query_positions().unsqueeze(1);
  return (distance + clip_).clamp(0, 2 * clip_ - 1);
}

torch::Tensor RelPosEntry::bias(const AttentionInputs& in) {
  // q . a^K for each of the 2k rows, then each (i, j) picks its row: O(Tq (2k) d + Tq Tk).
  const torch::Tensor by_row = torch::matmul(in.q.transpose(1, 2), table.narrow(1, 0, head_dim_).t()) * in.scaling;
  const torch::Tensor index = rows(in).expand({by_row.size(0), by_row.size(1), in.query_length, in.key_length});
  return by_row.gather(3, index);  // [B, H, Tq, Tk]
}

torch::Tensor RelPosEntry::values(const torch::Tensor& probs, const AttentionInputs& in) {
  // Σ_j α_ij a^V_ij = Σ_r (Σ_{j in row r} α_ij) a^V_r: the probabilities summed per row first.
  const torch::Tensor index = rows(in).expand(probs.sizes());
  const torch::Tensor per_row = torch::zeros({probs.size(0), probs.size(1), probs.size(2), 2 * clip_}, probs.options())
                                    .scatter_add(3, index, probs);
  return torch::matmul(per_row, table.narrow(1, head_dim_, head_dim_).to(probs.scalar_type()));  // [B, H, Tq, d]
}

namespace {

std::shared_ptr<AttentionEntry> make_rel_pos_entry(const core::Config& cfg, const AttentionSite& site) {
  const RelPosOptions o = RelPosOptions::from_config(cfg);
  if (!applies_at({"rel_pos", &o.encoder_layers, &o.decoder_layers, &o.cross_layers}, site)) return nullptr;
  return std::make_shared<RelPosEntry>(site.head_dim(), o.clip);
}

core::Registrar<AttentionEntrySpec> rel_pos_entry(
    attention_entry_registry(), "rel_pos",
    {"REL_POS (Shaw et al. 2018, CSAN Table 1): relative position embeddings for keys and values, clipped at k",
     [](core::ConfigSchema& s) { rel_pos_option_table().declare(s, /*with_defaults=*/false); },
     [] { return rel_pos_option_table().defaults(); }, make_rel_pos_entry});

}  // namespace

}  // namespace csan::nn
