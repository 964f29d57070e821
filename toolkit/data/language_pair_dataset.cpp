#include "toolkit/data/language_pair_dataset.h"

#include <algorithm>
#include <filesystem>

#include "toolkit/core/error.h"
#include "toolkit/data/token_id_check.h"

namespace csan::data {

namespace {

TokenMatrix pad_rows(const std::vector<std::vector<int64_t>>& rows, int64_t pad) {
  TokenMatrix m;
  m.rows = static_cast<int64_t>(rows.size());
  for (const auto& r : rows) m.cols = std::max<int64_t>(m.cols, static_cast<int64_t>(r.size()));
  m.values.assign(m.rows * m.cols, pad);
  for (int64_t i = 0; i < m.rows; ++i) std::copy(rows[i].begin(), rows[i].end(), m.values.begin() + i * m.cols);
  return m;
}

std::unique_ptr<MMapIndexedDataset> open_side(const std::string& prefix) {
  if (!std::filesystem::exists(prefix + ".idx"))
    throw Error(prefix + ".idx: no such file (is --data the output directory of csan-preprocess?)");
  return std::make_unique<MMapIndexedDataset>(prefix);
}

}  // namespace

CollatedBatch collate_pairs(const std::vector<int64_t>& ids, const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<std::vector<int64_t>>& targets, int64_t pad_index, int64_t eos_index) {
  CollatedBatch b;
  b.ids = ids;
  b.src_tokens = pad_rows(sources, pad_index);
  for (const auto& s : sources) b.src_lengths.push_back(static_cast<int64_t>(s.size()));
  b.target = pad_rows(targets, pad_index);
  std::vector<std::vector<int64_t>> prev(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    // fairseq's move_eos_to_beginning: the decoder sees </s> then the target shifted right.
    prev[i].push_back(eos_index);
    if (!targets[i].empty()) prev[i].insert(prev[i].end(), targets[i].begin(), targets[i].end() - 1);
    b.ntokens += static_cast<int64_t>(targets[i].size());
  }
  b.prev_output_tokens = pad_rows(prev, pad_index);
  return b;
}

LanguagePairDataset::LanguagePairDataset(const std::string& data_dir, const std::string& split,
                                         const std::string& src_lang, const std::string& tgt_lang, int64_t pad_index,
                                         int64_t eos_index)
    : pad_(pad_index), eos_(eos_index) {
  const std::string prefix = data_dir + "/" + split + "." + src_lang + "-" + tgt_lang + ".";
  src_prefix_ = prefix + src_lang;
  tgt_prefix_ = prefix + tgt_lang;
  src_ = open_side(src_prefix_);
  tgt_ = open_side(tgt_prefix_);
  if (src_->size() != tgt_->size())
    throw Error(prefix + "{" + src_lang + "," + tgt_lang + "}: source has " + std::to_string(src_->size()) +
                " sentences but target has " + std::to_string(tgt_->size()));
}

void LanguagePairDataset::check_token_ids(int64_t src_vocab_size, const std::string& src_dict_name,
                                          int64_t tgt_vocab_size, const std::string& tgt_dict_name) const {
  data::check_token_ids(*src_, src_prefix_, src_vocab_size, src_dict_name);
  data::check_token_ids(*tgt_, tgt_prefix_, tgt_vocab_size, tgt_dict_name);
}

std::vector<int64_t> LanguagePairDataset::source(int64_t i) const {
  std::vector<int64_t> tokens = src_->get(i);
  if (source_prefix_ >= 0) tokens.insert(tokens.begin(), source_prefix_);
  return tokens;
}

void LanguagePairDataset::set_source_prefix(int64_t token) {
  source_prefix_ = token;
  prefixed_src_sizes_ = src_->sizes();
  for (auto& size : prefixed_src_sizes_) ++size;
}

CollatedBatch LanguagePairDataset::collate(const Batch& batch) const {
  std::vector<std::vector<int64_t>> sources, targets;
  sources.reserve(batch.size());
  targets.reserve(batch.size());
  for (int64_t i : batch) {
    sources.push_back(source(i));
    targets.push_back(target(i));
  }
  return collate_pairs(batch, sources, targets, pad_, eos_);
}

}  // namespace csan::data
