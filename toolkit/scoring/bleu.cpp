#include "toolkit/scoring/bleu.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"
#include "toolkit/scoring/ngram_counts.h"
#include "toolkit/scoring/parallel.h"
#include "toolkit/scoring/report_format.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {
namespace {

// sacreBLEU's my_log: log(0) is a large negative number instead of -inf.
double log_or_floor(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

// Splits a tokenizer's single-spaced output.
void split_on_spaces(std::string_view text, std::vector<std::string_view>& words) {
  words.clear();
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

// Per-thread working memory for one segment, reused across segments.
struct SegmentScratch {
  std::string hyp_text;
  std::vector<std::string> ref_texts;
  std::vector<std::string_view> hyp_tokens;
  std::vector<std::vector<std::string_view>> ref_tokens;
  Interner<std::string_view> interner;
  std::vector<uint32_t> hyp_ids;
  std::vector<std::vector<uint32_t>> ref_ids;
};

template <class Key>
struct KeyScratch {
  std::vector<Key> hyp_keys;
  std::vector<std::vector<Key>> ref_keys;
  NGramMatcher<Key> matcher;
};

template <class Key>
void count_matches(const SegmentScratch& s, int bits, KeyScratch<Key>& k, Stats& stats) {
  k.ref_keys.resize(s.ref_ids.size());
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    size_t total_ref_keys = 0;
    for (size_t r = 0; r < s.ref_ids.size(); ++r) {
      next_order_keys(k.ref_keys[r], s.ref_ids[r], n, bits);
      total_ref_keys += k.ref_keys[r].size();
    }
    k.matcher.begin_max(total_ref_keys);
    for (const auto& keys : k.ref_keys) k.matcher.add_reference(keys);
    next_order_keys(k.hyp_keys, s.hyp_ids, n, bits);
    stats[1 + n] = static_cast<double>(k.matcher.take(k.hyp_keys));
    stats[1 + kBleuMaxOrder + n] = static_cast<double>(k.hyp_keys.size());
  }
}

// The reference length closest to the hypothesis length; ties go to the shorter one.
long long closest_ref_len(long long hyp_len, const std::vector<long long>& ref_lens) {
  long long best_diff = -1, best_len = -1;
  for (long long len : ref_lens) {
    long long diff = std::llabs(hyp_len - len);
    if (best_diff == -1 || diff < best_diff) {
      best_diff = diff;
      best_len = len;
    } else if (diff == best_diff && len < best_len) {
      best_len = len;
    }
  }
  return best_len;
}

}  // namespace

Bleu::Bleu(const BleuOptions& options) : options_(options) {
  const std::string& method = options_.smooth_method;
  if (method == "floor") {
    smooth_value_ = options_.smooth_value.value_or(0.1);
  } else if (method == "add-k") {
    smooth_value_ = options_.smooth_value.value_or(1.0);
  } else if (method == "exp" || method == "none") {
    smooth_value_ = 0.0;  // sacreBLEU ignores -sv for these
  } else {
    throw Error::for_key("smooth-method", "unknown BLEU smoothing method '" + method +
                         "' (choose from none, floor, add-k, exp)");
  }
  tokenizer_ = make_tokenizer(options_.tokenize, options_.spm_model);
}

std::vector<SignatureField> Bleu::signature_fields() const {
  std::string smooth = options_.smooth_method;
  if (smooth == "floor" || smooth == "add-k") smooth += "[" + format_fixed(smooth_value_, 2) + "]";
  return {
      {"case", "c", options_.lowercase ? "lc" : "mixed"},
      {"eff", "e", options_.effective_order ? "yes" : "no"},
      {"tok", "tok", tokenizer_->signature()},
      {"smooth", "s", smooth},
  };
}

std::string Bleu::preprocess(const std::string& line) const {
  if (!options_.lowercase) {
    if (!utf8::is_valid(line)) throw Error("invalid UTF-8 in a segment", ErrorKind::bad_input);
    return tokenizer_->tokenize_utf8(rstrip(std::string_view(line)));
  }
  std::string lowered = to_utf8(lower(to_u32(line)));
  return tokenizer_->tokenize_utf8(rstrip(std::string_view(lowered)));
}

std::vector<Stats> Bleu::segment_stats(const std::vector<std::string>& hyps,
                                       const std::vector<std::vector<std::string>>& refs) const {
  for (const auto& stream : refs) {
    if (stream.size() != hyps.size()) throw Error("System and reference streams have different lengths.", ErrorKind::bad_input);
  }
  std::vector<Stats> all(hyps.size());
  parallel_for(hyps.size(), [&](size_t begin, size_t end) {
    SegmentScratch s;
    KeyScratch<uint64_t> narrow;
    KeyScratch<Key128> wide;
    s.ref_texts.resize(refs.size());
    s.ref_tokens.resize(refs.size());
    s.ref_ids.resize(refs.size());
    std::vector<long long> ref_lens(refs.size());
    const bool single_spaced = tokenizer_->single_spaced();
    auto tokenize_split = [&](std::string_view text, std::vector<std::string_view>& words) {
      if (single_spaced) {
        split_on_spaces(text, words);
      } else {
        split_into(text, words);
      }
    };
    for (size_t i = begin; i < end; ++i) {
      size_t token_count = 0;
      for (size_t r = 0; r < refs.size(); ++r) {
        s.ref_texts[r] = preprocess(refs[r][i]);
        tokenize_split(s.ref_texts[r], s.ref_tokens[r]);
        token_count += s.ref_tokens[r].size();
      }
      s.hyp_text = preprocess(hyps[i]);
      tokenize_split(s.hyp_text, s.hyp_tokens);
      token_count += s.hyp_tokens.size();

      s.interner.reset(token_count);
      for (size_t r = 0; r < refs.size(); ++r) {
        s.ref_ids[r].clear();
        for (auto token : s.ref_tokens[r]) s.ref_ids[r].push_back(s.interner(token));
        ref_lens[r] = static_cast<long long>(s.ref_ids[r].size());
      }
      s.hyp_ids.clear();
      for (auto token : s.hyp_tokens) s.hyp_ids.push_back(s.interner(token));

      Stats stats(2 + 2 * kBleuMaxOrder, 0.0);
      long long hyp_len = static_cast<long long>(s.hyp_ids.size());
      stats[0] = static_cast<double>(hyp_len);
      stats[1] = static_cast<double>(closest_ref_len(hyp_len, ref_lens));
      // Ids are 32-bit, so four of them always fit in 128 bits.
      int bits = s.interner.id_bits();
      if (bits * kBleuMaxOrder <= 64) {
        count_matches(s, bits, narrow, stats);
      } else {
        count_matches(s, bits, wide, stats);
      }
      all[i] = std::move(stats);
    }
  });
  return all;
}

BleuResult Bleu::compute(const Stats& sum) const {
  if (sum.size() != 2 + 2 * kBleuMaxOrder) throw Error("BLEU statistics must have 10 values");
  BleuResult result;
  result.sys_len = static_cast<long long>(sum[0]);
  result.ref_len = static_cast<long long>(sum[1]);
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    result.counts[n] = sum[2 + n];
    result.totals[n] = sum[2 + kBleuMaxOrder + n];
  }
  result.ratio = result.ref_len ? static_cast<double>(result.sys_len) / result.ref_len : 0.0;
  result.bp = 1.0;
  if (result.sys_len < result.ref_len) {
    result.bp = result.sys_len > 0 ? std::exp(1.0 - static_cast<double>(result.ref_len) / result.sys_len) : 0.0;
  }
  bool any_match = false;
  for (double c : result.counts) any_match = any_match || c != 0.0;
  // sacreBLEU exits before smoothing when nothing matches at all.
  if (!any_match) return result;

  const std::string& method = options_.smooth_method;
  double smooth_mteval = 1.0;
  int eff_order = kBleuMaxOrder;
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    double& correct = result.counts[n - 1];
    double& total = result.totals[n - 1];
    if (method == "add-k" && n > 1) {
      correct += smooth_value_;
      total += smooth_value_;
    }
    if (total == 0.0) break;
    if (options_.effective_order) eff_order = n;
    double& precision = result.precisions[n - 1];
    if (correct == 0.0) {
      if (method == "exp") {
        smooth_mteval *= 2;
        precision = 100.0 / (smooth_mteval * total);
      } else if (method == "floor") {
        precision = 100.0 * smooth_value_ / total;
      }
    } else {
      precision = 100.0 * correct / total;
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < eff_order; ++n) log_sum += log_or_floor(result.precisions[n]);
  result.score = result.bp * std::exp(log_sum / eff_order);
  return result;
}

double Bleu::score_float32(const std::vector<float>& sum) const {
  // numpy promotes every BLEU operation on these sums to double, and integer counts
  // below 2^24 are exact in float32, so this is the double path.
  return compute(Stats(sum.begin(), sum.end())).score;
}

std::string BleuResult::verbose() const {
  std::string text;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    if (n) text += "/";
    text += format_fixed(precisions[n], 1);
  }
  text += " (BP = " + format_fixed(bp, 3) + " ratio = " + format_fixed(ratio, 3) +
          " hyp_len = " + std::to_string(sys_len) + " ref_len = " + std::to_string(ref_len) + ")";
  return text;
}

}  // namespace csan::scoring
