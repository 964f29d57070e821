// Translates sentences given as token ids with loaded models: sorted by length into
// batches (--batch-size sentences, --max-tokens source tokens, fewer when a large beam
// would make the caches too big), the batches searched in parallel, each worker with its
// own SequenceGenerator and caches. csan-generate, the Python package's Translator and
// the server all translate through it, so that they agree to the last token.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "toolkit/generation/hypothesis.h"
#include "toolkit/generation/loaded_ensemble.h"
#include "toolkit/generation/search_options.h"
#include "toolkit/generation/sequence_generator.h"
#include "toolkit/generation/shortlist.h"

namespace csan::generation {

// How sentences are grouped (csan-generate's --batch-size, --max-tokens, --parallel-batches).
struct BatchLimits {
  int64_t batch_size = 64;        // sentences per batch (0: no limit)
  int64_t max_tokens = 0;         // source tokens per batch (0: no limit)
  int64_t parallel_batches = 0;   // batches at once (0: one per thread, one on a GPU; see parallel_batches.h)
  bool operator==(const BatchLimits& o) const {
    return batch_size == o.batch_size && max_tokens == o.max_tokens && parallel_batches == o.parallel_batches;
  }
};

// One sentence: its source ids (ending with </s>; only </s> is an empty input, which gets no
// hypothesis), for SearchOptions::prefix_size the reference whose first tokens are forced, and
// its lexical constraints.
struct SourceSentence {
  std::vector<int64_t> src;
  std::vector<int64_t> forced;
  Constraints constraints;  // with SearchOptions::constraints: what the output must contain
};

class BatchTranslator {
 public:
  // `ensemble` and `shortlist` (null: the whole vocabulary) must outlive the translator.
  BatchTranslator(const LoadedEnsemble& ensemble, const SearchOptions& search, const BatchLimits& limits,
                  const Shortlist* shortlist = nullptr);

  // Hypotheses (best first, up to nbest) of each sentence, in the input's order. Sampling
  // seeds each batch from SearchOptions::seed and the batch's number, counted across calls,
  // so what is drawn does not depend on which thread translates which batch.
  std::vector<std::vector<Hypothesis>> translate(const std::vector<SourceSentence>& sentences);

  double seconds() const { return seconds_; }  // spent translating, over all calls
  int64_t most_parallel_batches() const { return most_parallel_batches_; }

 private:
  std::unique_ptr<SequenceGenerator> make_generator() const;

  const LoadedEnsemble& ensemble_;
  SearchOptions search_;
  BatchLimits limits_;
  const Shortlist* shortlist_;
  std::vector<std::unique_ptr<SequenceGenerator>> generators_;  // one per worker, each with its own caches
  int64_t batches_before_ = 0;
  double seconds_ = 0;
  int64_t most_parallel_batches_ = 0;
};

}  // namespace csan::generation
