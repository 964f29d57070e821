// Cached per-layer tensors for incremental decoding. Two kinds of entries:
//  - growing (self-attention keys/values of the prefix, one row per hypothesis):
//    stored position-major, [positions, rows, H, d], each step's positions written in
//    place. Beam search never moves them: reordering rows only rewrites a small table
//    rows_at [R, T] saying, for each current row and each position, which stored row
//    holds that row's history there (the beam's back-pointers, resolved). Attention
//    reads through the table (decoding_attention); at() gathers [R, H, T, d] for
//    callers that need it dense;
//  - fixed (encoder-side keys/values projected once, [N, H, S, d]): one row per
//    sentence. In beam search the R = N * beam hypotheses of the N sentences share them
//    (MultiheadAttention groups the beams' queries), so reordering beams never copies
//    them; they are selected only when sentences leave the batch.
// Attention keys and values may be stored compact (set_compact_type: bf16 where the model
// decodes in bf16 or int8 on the CPU): they are then most of a batch's decoding memory
// (transformer_base, 64 sentences x beam 5: 165 MB of self-attention caches in fp32).
// at() gives them back in the type they were written in; history() and stored() give
// them as stored, for the decoding kernel, which reads bf16 directly.
// A search's lexical shortlist rides along (set_output_vocabulary): the decoder's output
// layer scores only its rows.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "toolkit/nn/output_vocabulary.h"

namespace csan::nn {

class IncrementalState {
 public:
  // A growing entry as stored: positions [rows capacity, H, T, d] (a strided view) and
  // rows_at [R, T] int64, the stored row holding current row r's entry at position j.
  struct History {
    torch::Tensor positions;
    torch::Tensor rows_at;
  };

  // Positions the growing entries are allocated for when first written (they still
  // grow past it). Untouched capacity costs address space only, not memory.
  void reserve(int64_t positions) { reserved_ = std::max<int64_t>(positions, 1); }
  // The type compact entries (float32 ones written with compact = true) are stored in;
  // float32 (the default) stores them as written.
  void set_compact_type(torch::ScalarType type) { compact_type_ = type; }
  torch::ScalarType compact_type() const { return compact_type_; }

  // The output layer's restriction for this search (nullptr: the whole vocabulary).
  void set_output_vocabulary(std::shared_ptr<OutputVocabulary> vocabulary) {
    output_vocabulary_ = std::move(vocabulary);
  }
  OutputVocabulary* output_vocabulary() const { return output_vocabulary_.get(); }

  // Alignments (csan-generate --print-alignment): the decoder layer whose cache key is
  // `layer_key` ("decoder.layers.3") leaves the probabilities of its attention over the
  // encoder, averaged over the heads, in attention_slot() ([R, T', S] float) at each
  // step; "" (the default): no layer does.
  void request_attention(std::string layer_key) { attention_layer_ = std::move(layer_key); }
  bool attention_requested(const std::string& layer_key) const {
    return !attention_layer_.empty() && layer_key == attention_layer_;
  }
  torch::Tensor* attention_slot() { return &attention_; }
  // What the requested layer left at the last step (undefined: nothing), cleared.
  torch::Tensor take_attention() { return std::exchange(attention_, torch::Tensor()); }

  bool has(const std::string& key) const { return fixed_.count(key) > 0 || growing_.count(key) > 0; }
  // Positions held by a growing entry (0 when there is none).
  int64_t length(const std::string& key) const {
    const auto g = growing_.find(key);
    return g == growing_.end() ? 0 : g->second.length;
  }
  // A fixed entry, or a growing entry's positions gathered into [R, H, T, d], in the
  // type it was written in.
  torch::Tensor at(const std::string& key) const {
    const auto g = growing_.find(key);
    if (g == growing_.end()) {
      const Fixed& f = fixed_.at(key);
      return f.stored.to(f.written);
    }
    const Growing& e = g->second;
    const int64_t capacity_rows = e.buffer.size(1);
    const torch::Tensor flat_rows =
        rows_at(e.length) + torch::arange(e.length, rows_at_.options()).mul_(capacity_rows).unsqueeze(0);
    return e.buffer.view({-1, e.buffer.size(2), e.buffer.size(3)})
        .index_select(0, flat_rows.reshape(-1))
        .view({rows_, e.length, e.buffer.size(2), e.buffer.size(3)})
        .permute({0, 2, 1, 3})
        .to(e.written);
  }
  // A fixed entry as stored (compact entries in the compact type).
  const torch::Tensor& stored(const std::string& key) const { return fixed_.at(key).stored; }
  History history(const std::string& key) const {
    const Growing& e = growing_.at(key);
    return {e.buffer.narrow(0, 0, e.length).permute({1, 2, 0, 3}), rows_at(e.length)};
  }
  void set(const std::string& key, torch::Tensor value, bool compact = false) {
    const torch::ScalarType written = value.scalar_type();
    fixed_[key] = {compact ? value.to(storage_type(written, true)) : std::move(value), written};
  }

  // Writes positions [R, H, t, d] after the filled ones of a growing entry.
  void append(const std::string& key, const torch::Tensor& positions, bool compact = false) {
    const int64_t rows = positions.size(0), added = positions.size(2);
    TORCH_CHECK(rows_ < 0 || rows == rows_, "incremental state '", key, "': ", rows, " rows appended to ", rows_);
    Growing& g = growing_[key];
    const int64_t needed = g.length + added;
    const torch::ScalarType stored = storage_type(positions.scalar_type(), compact);
    if (!g.buffer.defined() || needed > g.buffer.size(0) || rows > g.buffer.size(1) ||
        g.buffer.scalar_type() != stored || g.buffer.device() != positions.device() ||
        g.buffer.size(2) != positions.size(1) || g.buffer.size(3) != positions.size(3)) {
      // First write (of this search, when a kept buffer does not fit), or past the reserve:
      // reallocate, growing with room to spare (amortized).
      const bool growing = g.length > 0;
      const int64_t capacity = std::max(needed, growing ? 2 * g.buffer.size(0) : reserved_);
      const int64_t capacity_rows = std::max(rows, growing ? g.buffer.size(1) : rows);
      torch::Tensor bigger = torch::empty({capacity, capacity_rows, positions.size(1), positions.size(3)},
                                          positions.options().dtype(stored));
      if (g.length > 0)
        bigger.narrow(0, 0, g.length).narrow(1, 0, g.buffer.size(1)).copy_(g.buffer.narrow(0, 0, g.length));
      g.buffer = bigger;
    }
    g.written = positions.scalar_type();
    g.buffer.narrow(0, g.length, added).narrow(1, 0, rows).copy_(positions.permute({2, 0, 1, 3}));
    g.length = needed;
    extend_rows_at(rows, needed, positions.device());
  }

  // One row per sentence (no shared rows): keeps rows new_order [R'] of every entry.
  void reorder(const torch::Tensor& new_order) {
    reorder_rows(new_order);
    for (auto& [key, f] : fixed_) f.stored = f.stored.index_select(0, new_order);
  }
  // Beam search: rows new_order [R'] of the growing entries; the fixed (per-sentence)
  // entries keep sentences [N'] when given (sentences left the batch), else stay as
  // they are (beams moved within their sentences).
  void reorder_beams(const torch::Tensor& new_order, const torch::Tensor& sentences = {}) {
    reorder_rows(new_order);
    if (sentences.defined())
      for (auto& [key, f] : fixed_) f.stored = f.stored.index_select(0, sentences);
  }
  void clear() {
    fixed_.clear();
    growing_.clear();
    restart();
  }
  // For the next search: every entry and setting is forgotten as by clear(), except the
  // growing entries' buffers, which the next search writes again where they fit (same
  // type, device and head shape; at most as many rows and positions). Why: a batch's
  // self-attention caches are most of its memory, and their pages stay resident once
  // written. Freed, they sat in the allocator's free spans while the next batch wrote fresh
  // pages elsewhere, and every new page cost a fault (csan-generate's peak RSS, fp32, two
  // batches at a time: 355-415 MiB freed, 297-312 kept;
  // tools/experiments/results/ctranslate2-cpu-2026-11-29.md).
  void restart() {
    fixed_.clear();
    for (auto& [key, g] : growing_) g.length = 0;
    rows_at_ = torch::Tensor();
    rows_ = -1;
    covered_ = 0;
    output_vocabulary_.reset();
    attention_layer_.clear();
    attention_ = torch::Tensor();
  }

 private:
  struct Growing {
    torch::Tensor buffer;  // [positions capacity, rows capacity, H, d]
    int64_t length = 0;
    torch::ScalarType written = torch::kFloat;
  };
  struct Fixed {
    torch::Tensor stored;
    torch::ScalarType written;
  };

  torch::ScalarType storage_type(torch::ScalarType written, bool compact) const {
    return compact && written == torch::kFloat ? compact_type_ : written;
  }

  torch::Tensor rows_at(int64_t length) const { return rows_at_.narrow(0, 0, rows_).narrow(1, 0, length); }

  // Positions [covered_, length) are new: each current row holds its own entry there.
  void extend_rows_at(int64_t rows, int64_t length, const torch::Device& device) {
    if (rows_ < 0) rows_ = rows;
    if (length <= covered_) return;
    if (!rows_at_.defined() || length > rows_at_.size(1)) {
      const int64_t capacity = std::max(length, rows_at_.defined() ? 2 * rows_at_.size(1) : reserved_);
      torch::Tensor bigger = torch::empty({rows_, capacity}, torch::dtype(torch::kLong).device(device));
      if (covered_ > 0) bigger.narrow(1, 0, covered_).copy_(rows_at(covered_));
      rows_at_ = bigger;
    }
    rows_at_.narrow(0, 0, rows_)
        .narrow(1, covered_, length - covered_)
        .copy_(torch::arange(rows_, rows_at_.options()).unsqueeze(1).expand({rows_, length - covered_}));
    covered_ = length;
  }

  void reorder_rows(const torch::Tensor& new_order) {
    if (rows_ < 0) return;  // nothing grown yet
    torch::Tensor table = rows_at_.narrow(0, 0, rows_).index_select(0, new_order.to(rows_at_.device()));
    rows_ = new_order.size(0);
    rows_at_ = table;
  }

  int64_t reserved_ = 16;
  torch::ScalarType compact_type_ = torch::kFloat;
  int64_t rows_ = -1;      // current rows of the growing entries (-1: none written yet)
  int64_t covered_ = 0;    // positions rows_at_ describes
  torch::Tensor rows_at_;  // [rows, positions capacity] int64
  std::unordered_map<std::string, Fixed> fixed_;
  std::unordered_map<std::string, Growing> growing_;
  std::shared_ptr<OutputVocabulary> output_vocabulary_;
  std::string attention_layer_;
  torch::Tensor attention_;
};

}  // namespace csan::nn
