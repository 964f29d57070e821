// CCN's input corruption (Li & Jiang 2020, Sec. 2.2): to make the two encoder branches
// less redundant, each branch sees the source sentence with two randomly chosen subword
// tokens swapped, with a probability per sentence. The random numbers come from
// LibTorch's default CPU generator, the one csan-train seeds with common.seed and
// stores in every checkpoint, so a seeded run corrupts the same way each time and an
// exactly resumed run stays exact.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace csan::models {

// tokens [B, T] int64, right-padded with pad_index, each sentence ending with </s>:
// a copy in which, with probability `probability`, each sentence has two of its tokens
// before the </s> swapped (two different positions, chosen uniformly; a sentence with
// fewer than two such tokens stays). Padding and </s> never move, so the multiset of
// tokens in each sentence is kept.
torch::Tensor swap_two_tokens(const torch::Tensor& tokens, double probability, int64_t pad_index);

}  // namespace csan::models
