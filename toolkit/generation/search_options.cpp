#include "toolkit/generation/search_options.h"

#include <cmath>
#include <string>

#include "toolkit/core/error.h"

namespace csan::generation {

void validate(const SearchOptions& o) {
  auto fail = [](const std::string& option, const std::string& why) { throw Error(option + ": " + why, ErrorKind::bad_option); };
  if (o.beam < 1 || o.beam > kMaxBeam)
    fail("--beam", std::to_string(o.beam) + " is outside [1, " + std::to_string(kMaxBeam) + "]");
  if (!std::isfinite(o.lenpen)) fail("--lenpen", "must be a finite number");
  if (!std::isfinite(o.unkpen)) fail("--unkpen", "must be a finite number");
  if (!std::isfinite(o.max_len_a)) fail("--max-len-a", "must be a finite number");
  if (o.nbest < 1 || o.nbest > o.beam) fail("--nbest", "must be between 1 and --beam (" + std::to_string(o.beam) + ")");
  if (o.max_len_a < 0 || o.max_len_b < 0) fail("--max-len-a/--max-len-b", "must not be negative");
  if (o.min_len < 0) fail("--min-len", "must not be negative");
  if (o.no_repeat_ngram_size < 0) fail("--no-repeat-ngram-size", "must not be negative");
  if (o.prefix_size < 0) fail("--prefix-size", "must not be negative");
  if (!(o.temperature > 0)) fail("--temperature", "must be greater than 0");
  if (!o.sampling && (o.sampling_topk > 0 || o.sampling_topp > 0))
    fail("--sampling-topk/--sampling-topp", "need --sampling");
  if (o.sampling_topk == 0 || o.sampling_topk < -1) fail("--sampling-topk", "must be positive (or -1 for all)");
  if (o.sampling_topp != -1.0 && !(o.sampling_topp > 0 && o.sampling_topp <= 1))
    fail("--sampling-topp", "must be in (0, 1] (or -1 for all)");
  if (o.sampling && o.constraints != ConstraintOrder::none) fail("--constraints", "need beam search (not --sampling)");
}

bool operator==(const SearchOptions& a, const SearchOptions& b) {
  return a.beam == b.beam && a.nbest == b.nbest && a.lenpen == b.lenpen && a.max_len_a == b.max_len_a &&
         a.max_len_b == b.max_len_b && a.min_len == b.min_len && a.unkpen == b.unkpen && a.allow_bos == b.allow_bos &&
         a.no_repeat_ngram_size == b.no_repeat_ngram_size && a.prefix_size == b.prefix_size &&
         a.temperature == b.temperature && a.sampling == b.sampling && a.sampling_topk == b.sampling_topk &&
         a.sampling_topp == b.sampling_topp && a.seed == b.seed && a.transformers_rules == b.transformers_rules &&
         a.attention == b.attention && a.alignment_layer == b.alignment_layer && a.constraints == b.constraints;
}

}  // namespace csan::generation
