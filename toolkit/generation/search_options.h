// What the search does (fairseq-generate's options); one struct so the CLI, the
// trainer's BLEU validation and the tests configure the generator the same way.
#pragma once

#include <cstdint>

#include "toolkit/generation/constraints.h"

namespace csan::generation {

struct SearchOptions {
  int64_t beam = 5;
  int64_t nbest = 1;  // hypotheses returned per sentence (<= beam)
  // fairseq's normalization, exactly: a finished hypothesis scores sum(log p) / L^lenpen,
  // L its length with the </s> (fairseq: eos_scores /= (step + 1) ** len_penalty). Beams
  // are ranked by their raw sums while searching; only finished ones are normalized.
  double lenpen = 1.0;
  // At most int(a * src_len + b) tokens before the </s>, capped at max_target_positions
  // - 1, where src_len counts the sentence's tokens and its </s>. fairseq takes src_len
  // from the batch's padded width (its longest source), so a sentence's limit there
  // depends on its batch neighbours; here it is the sentence's own length, so that
  // batched and one-at-a-time decoding agree.
  double max_len_a = 0.0;
  int64_t max_len_b = 200;
  int64_t min_len = 1;  // </s> is forbidden before this many tokens
  double unkpen = 0.0;  // subtracted from <unk>'s log-probability
  // <s> may be generated: fairseq's SequenceGenerator masks only <pad>, so a model imported
  // from fairseq translates exactly as fairseq-generate with it; csan masks <s> by default.
  bool allow_bos = false;
  int64_t no_repeat_ngram_size = 0;
  int64_t prefix_size = 0;      // force the first N reference tokens (needs references)
  double temperature = 1.0;     // logits are divided by it before the softmax (every mode)
  bool sampling = false;        // sample instead of beam search (beam = samples per sentence)
  int64_t sampling_topk = -1;   // sample among the k best tokens (-1: all)
  double sampling_topp = -1.0;  // sample from the smallest set with probability >= p (-1: all)
  uint64_t seed = 1;            // sampling generator seed
  // Beam search as transformers' generate() does it (num_beams, early_stopping=False), for
  // models imported from Hugging Face: the k best finished hypotheses are kept (a better one
  // replaces the worst), a sentence ends when no live beam's sum / (step + 1)^lenpen can beat
  // the worst finished one, and the </s> forced at the length limit scores 0, not its
  // log-probability. fairseq's rules (false): the first k finished hypotheses end a sentence.
  bool transformers_rules = false;
  // Keep each hypothesis's attention over its source (Hypothesis::attention: alignments),
  // that of the cross-attention of decoder layer alignment_layer (0-based, negative from
  // the last; -1, the last layer, is fairseq's default), averaged over heads and models.
  bool attention = false;
  int64_t alignment_layer = -1;
  // Lexically constrained decoding (beam search only): each sentence's constraints are
  // passed to SequenceGenerator::generate.
  ConstraintOrder constraints = ConstraintOrder::none;
};

// The largest beam csan searches with. Beam search past a few dozen rarely changes the
// best hypothesis (and often makes it worse), while time and cache memory grow linearly
// with the beam; the beam must also not exceed the target vocabulary (checked where the
// vocabulary is known).
inline constexpr int64_t kMaxBeam = 1024;
// Hypothesis rows (sentences x beam) translated at once: a large beam translates fewer
// sentences per batch so that the decoder caches stay bounded.
inline constexpr int64_t kMaxRowsPerBatch = 4096;

// Throws csan::Error naming the option (e.g. "--nbest") when values are inconsistent or
// not finite.
void validate(const SearchOptions& options);

// Every field equal: requests whose options compare equal may share batches (tasks::Translator).
bool operator==(const SearchOptions& a, const SearchOptions& b);

}  // namespace csan::generation
