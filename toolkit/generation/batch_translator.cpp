#include "toolkit/generation/batch_translator.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "toolkit/data/batching.h"
#include "toolkit/generation/parallel_batches.h"
#include "toolkit/nn/compute_device.h"

namespace csan::generation {

namespace {

torch::Tensor to_matrix(const std::vector<const std::vector<int64_t>*>& rows, int64_t width, int64_t pad) {
  auto m = torch::full({static_cast<int64_t>(rows.size()), width}, pad, torch::kLong);
  auto a = m.accessor<int64_t, 2>();
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t t = 0; t < std::min<int64_t>(width, static_cast<int64_t>(rows[i]->size())); ++t)
      a[static_cast<int64_t>(i)][t] = (*rows[i])[t];
  return m;
}

}  // namespace

BatchTranslator::BatchTranslator(const LoadedEnsemble& ensemble, const SearchOptions& search,
                                 const BatchLimits& limits, const Shortlist* shortlist)
    : ensemble_(ensemble), search_(search), limits_(limits), shortlist_(shortlist) {}

std::unique_ptr<SequenceGenerator> BatchTranslator::make_generator() const {
  const auto& d = ensemble_.tgt_dict;
  return std::make_unique<SequenceGenerator>(
      ensemble_.models, search_, SpecialTokens{d.bos(), d.pad(), d.eos(), d.unk(), ensemble_.decoder_start});
}

std::vector<std::vector<Hypothesis>> BatchTranslator::translate(const std::vector<SourceSentence>& sentences) {
  std::vector<std::vector<Hypothesis>> results(sentences.size());
  std::vector<int64_t> order;
  std::vector<int32_t> sizes(sentences.size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    sizes[i] = static_cast<int32_t>(sentences[i].src.size());
    if (sentences[i].src.size() > 1) order.push_back(static_cast<int64_t>(i));  // empty inputs stay empty
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return sizes[a] < sizes[b]; });
  // A large beam translates fewer sentences at once (kMaxRowsPerBatch rows of caches).
  const int64_t by_rows = std::max<int64_t>(1, kMaxRowsPerBatch / search_.beam);
  const int64_t per_batch = limits_.batch_size > 0 ? std::min(limits_.batch_size, by_rows) : by_rows;
  const auto batches = data::batch_by_size(order, sizes, sizes, {limits_.max_tokens, per_batch, 1});
  const int64_t count = static_cast<int64_t>(batches.size());
  // One GPU runs one batch at a time best: concurrent searches only queue its kernels.
  const bool on_gpu = !nn::device_of(*ensemble_.models.front()).is_cpu();
  const int64_t workers =
      resolve_parallel_batches(on_gpu && limits_.parallel_batches == 0 ? 1 : limits_.parallel_batches, count);
  while (static_cast<int64_t>(generators_.size()) < workers) generators_.push_back(make_generator());
  most_parallel_batches_ = std::max(most_parallel_batches_, workers);
  const int64_t pad = ensemble_.tgt_dict.pad();
  const auto start = std::chrono::steady_clock::now();
  // Longest batches first: their buffers are the largest, and every later batch's then fit into
  // spans the allocator already holds, so its high-water mark is the largest batch's rather than
  // growing with each longer batch. With several workers, half of them take from the long end
  // and half from the short end, so that a long batch runs beside a short one rather than
  // beside the next long one (a file's peak RSS, median over 10 runs: 405 MiB shortest first, 357
  // longest first; over 8 more: 374 longest first, 347 from both ends;
  // tools/experiments/results/ctranslate2-cpu-2026-11-28b.md). A batch's seed is its place in the
  // sorted order, whichever order the batches run in.
  std::mutex ends_mutex;
  int64_t shortest = 0, longest = count - 1;  // the ends not yet taken
  for_each_batch_in_parallel(count, workers, [&](int64_t worker, int64_t) {
    int64_t index;
    {
      std::lock_guard<std::mutex> lock(ends_mutex);
      index = worker % 2 == 0 ? longest-- : shortest++;
    }
    const auto& batch = batches[static_cast<size_t>(index)];
    SequenceGenerator& generator = *generators_[static_cast<size_t>(worker)];
    std::vector<const std::vector<int64_t>*> src, prefix;
    std::vector<int64_t> lengths;
    std::vector<Constraints> constraints;
    int64_t width = 0;
    for (int64_t i : batch) {
      if (search_.constraints != ConstraintOrder::none) constraints.push_back(sentences[i].constraints);
      src.push_back(&sentences[i].src);
      lengths.push_back(static_cast<int64_t>(sentences[i].src.size()));
      width = std::max(width, lengths.back());
      prefix.push_back(&sentences[i].forced);
    }
    torch::Tensor forced;
    if (search_.prefix_size > 0) forced = to_matrix(prefix, search_.prefix_size, pad);
    generator.reseed(search_.seed + static_cast<uint64_t>(batches_before_ + index));
    const torch::Tensor src_tokens = to_matrix(src, width, pad);
    if (shortlist_) {
      // Forced prefix tokens must stay reachable whatever the shortlist says.
      std::vector<int64_t> forced_ids;
      const size_t forced_length = static_cast<size_t>(std::max<int64_t>(0, search_.prefix_size));
      for (const auto* p : prefix)
        forced_ids.insert(forced_ids.end(), p->begin(), p->begin() + std::min(forced_length, p->size()));
      // So must every constraint's tokens.
      for (const auto& sentence : constraints)
        for (const auto& c : sentence) forced_ids.insert(forced_ids.end(), c.begin(), c.end());
      generator.set_output_vocabulary(shortlist_->vocabulary_for(src_tokens, forced_ids), ensemble_.tgt_dict.size());
    }
    auto hyps = generator.generate(src_tokens, torch::tensor(lengths), forced,
                                   search_.constraints != ConstraintOrder::none ? &constraints : nullptr);
    for (size_t b = 0; b < batch.size(); ++b) results[batch[b]] = std::move(hyps[b]);
  });
  batches_before_ += count;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return results;
}

}  // namespace csan::generation
