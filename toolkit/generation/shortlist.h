// Lexical shortlist (Marian's --shortlist, CTranslate2's vocabulary map): for each
// source token, the target tokens most associated with it in the training data, plus
// the most frequent target tokens. csan-generate --shortlist scores, per batch, only
// the union of its source tokens' candidates, the frequent tokens and the special
// tokens, so the output projection shrinks from the vocabulary to a few hundred rows.
//
// Association is the Dice coefficient of sentence-level co-occurrence,
// 2 c(s,t) / (c(s) + c(t)), counted once per sentence pair: plain p(t|s) would rank
// the frequent target words first for every source word, and those are kept anyway.
// No aligner is needed.
//
// File (text, written by tools/build-shortlist):
//   csan-shortlist 1
//   source-dictionary SIZE CRC32C        (of the dictionary's text, dict.SRC.txt)
//   target-dictionary SIZE CRC32C
//   frequent N ID...
//   one line per source id 0..SIZE-1: N ID...   (target ids, best first)
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/text/dictionary.h"

namespace csan::generation {

struct ShortlistOptions {
  int64_t top_k = 50;      // candidates per source token
  int64_t frequent = 100;  // most frequent target tokens, always kept
};

class Shortlist {
 public:
  // Counts co-occurrences over sentence pairs (token ids, </s> included or not).
  static Shortlist build(const std::vector<std::vector<int64_t>>& sources,
                         const std::vector<std::vector<int64_t>>& targets, const text::Dictionary& src_dict,
                         const text::Dictionary& tgt_dict, const ShortlistOptions& options);
  // Throws csan::Error "PATH:LINE: ..." for a malformed file, and "PATH: ..." when it was
  // built for other dictionaries than src_dict/tgt_dict.
  static Shortlist load(const std::string& path, const text::Dictionary& src_dict, const text::Dictionary& tgt_dict);
  // Written to a temporary file, then renamed.
  void save(const std::string& path) const;

  // The sorted target ids a batch may produce: the candidates of every token of
  // `src_tokens` (any shape, int64), the frequent tokens, the special tokens, and `extra`.
  torch::Tensor vocabulary_for(const torch::Tensor& src_tokens, const std::vector<int64_t>& extra = {}) const;

  const std::vector<int64_t>& candidates(int64_t source_id) const { return candidates_.at(source_id); }
  const std::vector<int64_t>& frequent() const { return frequent_; }
  int64_t target_size() const { return target_size_; }

 private:
  int64_t source_size_ = 0, target_size_ = 0;
  uint32_t source_crc_ = 0, target_crc_ = 0;
  std::vector<int64_t> specials_;  // bos, pad, eos, unk of the target dictionary
  std::vector<int64_t> frequent_;
  std::vector<std::vector<int64_t>> candidates_;  // per source id
};

// build() over the binarized split DIR/SPLIT.SRC-TGT.{SRC,TGT} with the dictionaries
// DIR/dict.{SRC,TGT}.txt (csan-preprocess output). Throws csan::Error naming a missing file.
Shortlist build_shortlist(const std::string& data_dir, const std::string& split, const std::string& src_lang,
                          const std::string& tgt_lang, const ShortlistOptions& options);

}  // namespace csan::generation
