#include "toolkit/nn/block_entry.h"

#include <cmath>
#include <memory>

#include "toolkit/core/error.h"
#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/locality_bias.h"

CSAN_REGISTRATION_ANCHOR(block_entry)

namespace csan::nn {

const core::OptionTable<BlockOptions>& block_option_table() {
  static const auto table =
      core::OptionTable<BlockOptions>()
          .add("model.block.size", &BlockOptions::size, "BLOCK: positions per block (at most max_source_positions)", 1)
          .add("model.block.encoder_layers", &BlockOptions::encoder_layers,
               "BLOCK: encoder layers (0 = lowest) whose self-attention is intra-block plus inter-block", 0);
  return table;
}

BlockOptions BlockOptions::from_config(const core::Config& cfg) { return block_option_table().read(cfg); }

BlockEntry::BlockEntry(int64_t d, int64_t num_heads, int64_t block_size, double attention_dropout)
    : num_heads_(num_heads), block_size_(block_size), attention_dropout_(attention_dropout) {
  summary_gate = register_module("summary_gate", Dense(d, d));
  summary_logits = register_module("summary_logits", Dense(d, num_heads));
  block_query = register_module("block_query", Dense(d, d));
  fusion_gate = register_module("fusion_gate", Dense(2 * d, d));
  merge = register_module("merge", Dense(d, d, /*bias=*/false));
  for (Dense* layer : {&summary_gate, &summary_logits, &block_query, &fusion_gate, &merge}) {
    init_xavier_uniform((*layer)->weight);
    if ((*layer)->bias.defined()) init_constant((*layer)->bias, 0.0);
  }
}

torch::Tensor BlockEntry::bias(const AttentionInputs& in) {
  const torch::Tensor query_block = in.query_positions().div(block_size_, "floor").unsqueeze(1);
  const torch::Tensor key_block = in.key_positions().div(block_size_, "floor").unsqueeze(0);
  return torch::zeros({in.query_length, in.key_length}, torch::dtype(torch::kFloat).device(in.device()))
      .masked_fill_(query_block != key_block, kHiddenScore)
      .view({1, 1, in.query_length, in.key_length});
}

torch::Tensor BlockEntry::output(const torch::Tensor& context, const AttentionInputs& in) {
  const int64_t batch = context.size(0), length = context.size(1), d = context.size(2);
  const int64_t heads = num_heads_, head_dim = d / heads, n = block_size_;
  const int64_t blocks = (length + n - 1) / n, padded = blocks * n;
  // Positions past the sentence (its padding, and the last block's filler) are hidden.
  torch::Tensor hidden = in.key_padding_mask.defined()
                             ? in.key_padding_mask
                             : torch::zeros({batch, length}, torch::dtype(torch::kBool).device(context.device()));
  // What a hidden query's context holds (another entry's window may leave it nothing to
  // see) must not reach a summary, not even as 0 x NaN.
  torch::Tensor r = in.key_padding_mask.defined() ? context.masked_fill(hidden.unsqueeze(-1), 0.0) : context;
  if (padded > length) {
    r = torch::constant_pad_nd(r, {0, 0, 0, padded - length});
    hidden = torch::cat({hidden, torch::ones({batch, padded - length}, hidden.options())}, 1);
  }
  // Source2token summary of each block, per head: w = softmax over the block (hidden positions excluded).
  torch::Tensor logits = summary_logits(torch::sigmoid(summary_gate(r)));  // [B, P, H]
  logits = logits.masked_fill(hidden.unsqueeze(-1), hidden_score(logits.scalar_type())).view({batch, blocks, n, heads});
  const torch::Tensor weights = torch::softmax(logits, 2);
  const torch::Tensor r_heads = r.view({batch, blocks, n, heads, head_dim});
  const torch::Tensor s = (weights.unsqueeze(-1) * r_heads).sum(2);  // [B, M, H, d]
  const torch::Tensor s_flat = s.reshape({batch, blocks, d});

  // Inter-block attention; a block of nothing but hidden positions is not attended to.
  const torch::Tensor queries =
      block_query(s_flat).view({batch, blocks, heads, head_dim}).transpose(1, 2) / std::sqrt(double(head_dim));
  const torch::Tensor keys = s.transpose(1, 2);  // [B, H, M, d], also the values
  const torch::Tensor empty_block = hidden.view({batch, blocks, n}).all(2).view({batch, 1, 1, blocks});
  const torch::Tensor scores = torch::matmul(queries, keys.transpose(-2, -1));
  torch::Tensor probs = torch::softmax(scores.masked_fill(empty_block, hidden_score(scores.scalar_type())), -1);
  if (in.training && attention_dropout_ > 0) probs = torch::dropout(probs, attention_dropout_, true);
  const torch::Tensor o = torch::matmul(probs, keys).transpose(1, 2).reshape({batch, blocks, d});

  const torch::Tensor gate = torch::sigmoid(fusion_gate(torch::cat({s_flat, o}, -1)));
  const torch::Tensor e = gate * o + (1 - gate) * s_flat;  // [B, M, D]
  // Each position gets its block's e.
  const torch::Tensor e_at = e.unsqueeze(2).expand({batch, blocks, n, d}).reshape({batch, padded, d});
  return merge(e_at.narrow(1, 0, length));
}

namespace {

std::shared_ptr<AttentionEntry> make_block_entry(const core::Config& cfg, const AttentionSite& site) {
  const BlockOptions o = BlockOptions::from_config(cfg);
  if (cfg.has("model.max_source_positions") && o.size > cfg.get<int64_t>("model.max_source_positions"))
    throw Error::for_key("model.block.size", std::to_string(o.size) + " positions per block exceed the " +
                                                 std::to_string(cfg.get<int64_t>("model.max_source_positions")) +
                                                 " of model.max_source_positions");
  EntryLayers layers{"block", &o.encoder_layers};
  layers.no_decoder = "cannot be causal: a block summary reads the whole block, later positions included";
  layers.no_cross = "splits one sequence into blocks (self-attention only)";
  if (!applies_at(layers, site)) return nullptr;
  const double dropout = cfg.has("model.attention_dropout") ? cfg.get<double>("model.attention_dropout") : 0.0;
  return std::make_shared<BlockEntry>(site.embed_dim, site.num_heads, o.size, dropout);
}

core::Registrar<AttentionEntrySpec> block_entry(
    attention_entry_registry(), "block",
    {"BLOCK (Shen et al. 2018b BiBloSAN, CSAN Table 1): intra-block attention, then inter-block attention",
     [](core::ConfigSchema& s) { block_option_table().declare(s, /*with_defaults=*/false); },
     [] { return block_option_table().defaults(); }, make_block_entry});

}  // namespace

}  // namespace csan::nn
