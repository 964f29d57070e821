// A parallel corpus as stored by csan-preprocess: two mmap indexed datasets (source and
// target token ids, each sentence ending with </s>). Collating a batch produces plain
// right-padded row-major arrays; training/ turns them into tensors (data/ is torch-free).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/data/batching.h"
#include "toolkit/data/indexed_dataset.h"

namespace csan::data {

// Row-major [rows x cols] int64 matrix.
struct TokenMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> values;

  // Row r of a right-padded matrix, up to its first pad.
  std::vector<int64_t> row_before_pad(int64_t r, int64_t pad) const {
    std::vector<int64_t> out;
    for (int64_t c = 0; c < cols && values[r * cols + c] != pad; ++c) out.push_back(values[r * cols + c]);
    return out;
  }
};

struct CollatedBatch {
  std::vector<int64_t> ids;          // example indices, in batch order
  TokenMatrix src_tokens;            // [B, S], right-padded
  std::vector<int64_t> src_lengths;  // [B]
  TokenMatrix prev_output_tokens;    // [B, T]: </s> followed by target[:-1]
  TokenMatrix target;                // [B, T], right-padded
  int64_t ntokens = 0;               // non-padding target tokens (incl. </s>)
  int64_t nsentences() const { return static_cast<int64_t>(ids.size()); }
};

class LanguagePairDataset {
 public:
  // prefix: DIR/SPLIT.SRC-TGT (files PREFIX.SRC.{bin,idx} and PREFIX.TGT.{bin,idx}).
  LanguagePairDataset(const std::string& data_dir, const std::string& split, const std::string& src_lang,
                      const std::string& tgt_lang, int64_t pad_index, int64_t eos_index);

  size_t size() const { return src_->size(); }
  const std::vector<int32_t>& src_sizes() const { return source_prefix_ < 0 ? src_->sizes() : prefixed_src_sizes_; }
  const std::vector<int32_t>& tgt_sizes() const { return tgt_->sizes(); }
  CollatedBatch collate(const Batch& batch) const;
  // Record i's token ids (the source with its prefix, if any).
  std::vector<int64_t> source(int64_t i) const;
  std::vector<int64_t> target(int64_t i) const { return tgt_->get(i); }
  // Puts `token` before every source sentence from now on (a multilingual model's
  // target-language token, fairseq's --encoder-langtok tgt); the source sizes count it.
  void set_source_prefix(int64_t token);
  // The decoder's first input (the eos_index given: </s>, <pad> or a language token).
  int64_t decoder_start() const { return eos_; }
  // Throws csan::Error naming the file, record and id at the first token id outside its
  // side's dictionary (sizes and names of the source and target dictionaries).
  void check_token_ids(int64_t src_vocab_size, const std::string& src_dict_name, int64_t tgt_vocab_size,
                       const std::string& tgt_dict_name) const;

 private:
  std::string src_prefix_, tgt_prefix_;
  std::unique_ptr<MMapIndexedDataset> src_, tgt_;
  int64_t pad_, eos_;
  int64_t source_prefix_ = -1;  // -1: none
  std::vector<int32_t> prefixed_src_sizes_;
};

// Collation on token lists already in memory (what LanguagePairDataset uses; tests call it).
CollatedBatch collate_pairs(const std::vector<int64_t>& ids, const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<std::vector<int64_t>>& targets, int64_t pad_index, int64_t eos_index);

}  // namespace csan::data
