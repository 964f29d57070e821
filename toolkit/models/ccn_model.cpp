#include "toolkit/models/ccn_model.h"

#include "toolkit/core/error.h"
#include "toolkit/models/ccn_input_corruption.h"
#include "toolkit/models/token_embedding.h"

namespace csan::models {

CcnModel::CcnModel(const TransformerOptions& options, const CcnOptions& ccn, const ModelContext& context)
    : options_(options), ccn_(ccn), pad_index_(context.pad_index) {
  const int64_t d = options.layer.embed_dim, pad = context.pad_index;
  const int64_t src_vocab = context.vocab_size("source"), tgt_vocab = context.vocab_size("target");
  // Both encoder branches read one source embedding (Sec. 2.2: BPE embeddings shared globally).
  if (options.share_all_embeddings) {
    if (!context.joined_dictionary || src_vocab != tgt_vocab)
      throw Error::for_key("model.share_all_embeddings",
                           "requires a joined dictionary (preprocess with --joined-dictionary)");
    TokenEmbedding shared(src_vocab, d, pad);
    encoder = register_module("encoder", CcnEncoder(options, ccn, shared, pad));
    decoder = register_module("decoder", CcnDecoder(options, ccn, shared, /*owned_elsewhere=*/true, pad));
  } else {
    encoder = register_module("encoder", CcnEncoder(options, ccn, TokenEmbedding(src_vocab, d, pad), pad));
    decoder = register_module("decoder", CcnDecoder(options, ccn, TokenEmbedding(tgt_vocab, d, pad), false, pad));
  }
}

EncoderOut CcnModel::encode(const NamedTensors& input) {
  const torch::Tensor& src_tokens = input.at("src_tokens");
  if (!is_training()) return encoder(src_tokens, src_tokens);
  // Left first, then right: one fixed order of draws from the seeded generator.
  torch::Tensor left = swap_two_tokens(src_tokens, ccn_.swap_probability, pad_index_);
  torch::Tensor right = swap_two_tokens(src_tokens, ccn_.swap_probability, pad_index_);
  return encoder(left, right);
}

torch::Tensor CcnModel::decode(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                               nn::IncrementalState* state) {
  return decoder(prev_output_tokens, encoder_out, state);
}

torch::Tensor CcnModel::forward_positions(const NamedTensors& input, const torch::Tensor& positions) {
  return decoder(input.at("prev_output_tokens"), encode(input), nullptr, positions);
}

void CcnModel::for_each_attention(const std::function<void(const nn::AttentionSite&, nn::MultiheadAttention&)>& visit) {
  const int64_t heads = options_.layer.heads, d = options_.layer.embed_dim;
  const auto encoder_layers = static_cast<int64_t>(encoder->layers->size());
  const auto decoder_layers = static_cast<int64_t>(decoder->layers->size());
  const auto gates = ccn_.encoder_gates();
  for (int64_t i = 0; i < encoder_layers; ++i) {
    auto layer = encoder->layers[i]->as<CcnEncoderLayer>();
    for (int b : {kLeft, kRight}) {
      // Queries, keys and values of one sequence only where the gates name one branch.
      const bool self = gates[b].query == gates[b].key && gates[b].key == gates[b].value;
      visit({std::string("encoder.") + branch_name(b) + ".self", i, encoder_layers, heads, d, /*causal=*/false, self},
            (b == kLeft ? layer->left : layer->right)->self_attn);
    }
  }
  for (int64_t i = 0; i < decoder_layers; ++i) {
    auto layer = decoder->layers[i]->as<CcnDecoderLayer>();
    visit({"decoder.self", i, decoder_layers, heads, d, /*causal=*/true, /*self=*/true}, layer->self_attn);
    visit({"decoder.cross.left", i, decoder_layers, heads, d, false, false}, layer->left->encoder_attn);
    visit({"decoder.cross.right", i, decoder_layers, heads, d, false, false}, layer->right->encoder_attn);
  }
}

}  // namespace csan::models
