#include "toolkit/scoring/chrf.h"

#include "toolkit/core/error.h"
#include "toolkit/scoring/ngram_counts.h"
#include "toolkit/scoring/parallel.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {
namespace {

bool is_ascii_punctuation(char32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}

// sacreBLEU's _compute_f_score; `quotient` is m / h in double (exact path) or in
// float32 (bootstrap path), which is the only place the two differ.
template <class Stat, class Quotient>
double f_score(const Stat* stats, int orders, int beta, bool eps_smoothing, Quotient quotient) {
  const double eps = 1e-16;
  // Python's beta ** 2 is an exact integer (no overflow for large --chrf-beta); it meets
  // the floats as float(factor) and float(1 + factor).
  const int64_t square = static_cast<int64_t>(beta) * beta;
  const double factor = static_cast<double>(square);
  const double one_plus_factor = static_cast<double>(square + 1);
  double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (int i = 0; i < orders; ++i) {
    Stat n_hyp = stats[3 * i], n_ref = stats[3 * i + 1], n_match = stats[3 * i + 2];
    double prec = n_hyp > 0 ? quotient(n_match, n_hyp) : eps;
    double rec = n_ref > 0 ? quotient(n_match, n_ref) : eps;
    double denom = factor * prec + rec;
    score += denom > 0 ? one_plus_factor * prec * rec / denom : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (eps_smoothing) return 100 * score / orders;
  if (effective_order == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec == 0.0) return 0.0;
  score = one_plus_factor * avg_prec * avg_rec;
  score /= (factor * avg_prec) + avg_rec;
  return 100 * score;
}

double double_quotient(double a, double b) { return a / b; }
double float_quotient(float a, float b) { return static_cast<double>(a / b); }

// Per-thread working memory for one kind of n-gram (characters or words).
template <class Item>
struct OrderCounter {
  Interner<Item> interner;
  std::vector<uint32_t> hyp_ids;
  std::vector<std::vector<uint32_t>> ref_ids;

  // Writes [hyp, ref, match] for orders 1..max_order at stats[r][3 * first_order ...].
  void count(const std::vector<Item>& hyp, const std::vector<std::vector<Item>>& refs, int max_order, int first_order,
             std::vector<Stats>& stats) {
    size_t total = hyp.size();
    for (const auto& ref : refs) total += ref.size();
    interner.reset(total);
    auto to_ids = [&](const std::vector<Item>& items, std::vector<uint32_t>& ids) {
      ids.clear();
      for (const Item& item : items) ids.push_back(interner(item));
    };
    to_ids(hyp, hyp_ids);
    ref_ids.resize(refs.size());
    for (size_t r = 0; r < refs.size(); ++r) to_ids(refs[r], ref_ids[r]);
    int bits = interner.id_bits();
    with_ngram_key(max_order, bits, [&](auto key) {
      count_orders<decltype(key)>(max_order, bits, first_order, stats);
      return 0;
    });
  }

  template <class Key>
  void count_orders(int max_order, int bits, int first_order, std::vector<Stats>& stats) {
    static thread_local std::vector<Key> hyp_keys;
    static thread_local std::vector<std::vector<Key>> ref_keys;
    static thread_local NGramMatcher<Key> matcher;
    ref_keys.resize(ref_ids.size());
    for (int n = 1; n <= max_order; ++n) {
      next_order_keys(hyp_keys, hyp_ids, n, bits);
      for (size_t r = 0; r < ref_ids.size(); ++r) {
        next_order_keys(ref_keys[r], ref_ids[r], n, bits);
        double* out = &stats[r][3 * (first_order + n - 1)];
        // A reference without n-grams of this order makes the hypothesis count 0.
        out[0] = ref_keys[r].empty() ? 0.0 : static_cast<double>(hyp_keys.size());
        out[1] = static_cast<double>(ref_keys[r].size());
        out[2] = static_cast<double>(matcher.matches(hyp_keys, ref_keys[r]));
      }
    }
  }
};

void chrf_chars(std::u32string_view line, bool keep_whitespace, std::vector<uint64_t>& chars) {
  chars.clear();
  for (char32_t c : line) {
    if (keep_whitespace || !is_space(c)) chars.push_back(c);
  }
}

struct ChrfScratch {
  OrderCounter<uint64_t> chars;
  OrderCounter<std::u32string_view> words;
  std::vector<uint64_t> hyp_chars;
  std::vector<std::vector<uint64_t>> ref_chars;
  std::vector<std::u32string_view> hyp_words;
  std::vector<std::vector<std::u32string_view>> ref_words;
  std::vector<Stats> per_ref;
};

}  // namespace

std::vector<std::u32string_view> chrf_words(std::u32string_view line) {
  std::vector<std::u32string_view> words;
  for (std::u32string_view word : split(line)) {
    if (word.size() == 1) {
      words.push_back(word);
    } else if (is_ascii_punctuation(word.back())) {
      words.push_back(word.substr(0, word.size() - 1));
      words.push_back(word.substr(word.size() - 1));
    } else if (is_ascii_punctuation(word.front())) {
      words.push_back(word.substr(0, 1));
      words.push_back(word.substr(1));
    } else {
      words.push_back(word);
    }
  }
  return words;
}

Chrf::Chrf(const ChrfOptions& options) : options_(options) {
  if (options_.char_order < 0 || options_.word_order < 0 || options_.char_order + options_.word_order == 0) {
    throw Error::for_key("chrf-char-order", "chrF needs a positive character or word n-gram order");
  }
}

std::string Chrf::name() const {
  return "chrF" + std::to_string(options_.beta) + std::string(options_.word_order, '+');
}

std::vector<SignatureField> Chrf::signature_fields() const {
  return {
      {"case", "c", options_.lowercase ? "lc" : "mixed"}, {"eff", "e", options_.eps_smoothing ? "no" : "yes"},
      {"nc", "nc", std::to_string(options_.char_order)},  {"nw", "nw", std::to_string(options_.word_order)},
      {"space", "s", options_.whitespace ? "yes" : "no"},
  };
}

std::vector<Stats> Chrf::segment_stats(const std::vector<std::string>& hyps,
                                       const std::vector<std::vector<std::string>>& refs) const {
  for (const auto& stream : refs) {
    if (stream.size() != hyps.size()) throw Error("System and reference streams have different lengths.", ErrorKind::bad_input);
  }
  if (refs.empty()) throw Error("chrF needs at least one reference stream", ErrorKind::bad_input);
  const int orders = options_.char_order + options_.word_order;
  std::vector<Stats> all(hyps.size());
  auto preprocess = [&](const std::string& line) {
    std::u32string text = to_u32(line);
    return options_.lowercase ? lower(text) : text;
  };
  parallel_for(hyps.size(), [&](size_t begin, size_t end) {
    ChrfScratch s;
    std::vector<std::u32string> ref_texts(refs.size());
    s.ref_chars.resize(refs.size());
    s.ref_words.resize(refs.size());
    for (size_t i = begin; i < end; ++i) {
      std::u32string hyp_text = preprocess(hyps[i]);
      for (size_t r = 0; r < refs.size(); ++r) ref_texts[r] = preprocess(refs[r][i]);
      s.per_ref.assign(refs.size(), Stats(3 * orders, 0.0));
      if (options_.char_order > 0) {
        chrf_chars(hyp_text, options_.whitespace, s.hyp_chars);
        for (size_t r = 0; r < refs.size(); ++r) chrf_chars(ref_texts[r], options_.whitespace, s.ref_chars[r]);
        s.chars.count(s.hyp_chars, s.ref_chars, options_.char_order, 0, s.per_ref);
      }
      if (options_.word_order > 0) {
        s.hyp_words = chrf_words(hyp_text);
        for (size_t r = 0; r < refs.size(); ++r) s.ref_words[r] = chrf_words(ref_texts[r]);
        s.words.count(s.hyp_words, s.ref_words, options_.word_order, options_.char_order, s.per_ref);
      }
      // The reference with the best sentence-level F; ties keep the earlier one.
      size_t best = 0;
      double best_f = -1.0;
      for (size_t r = 0; r < refs.size(); ++r) {
        double f = f_score(s.per_ref[r].data(), orders, options_.beta, options_.eps_smoothing, double_quotient);
        if (f > best_f) {
          best_f = f;
          best = r;
        }
      }
      all[i] = std::move(s.per_ref[best]);
    }
  });
  return all;
}

double Chrf::score(const Stats& sum) const {
  const int orders = options_.char_order + options_.word_order;
  if (sum.size() != static_cast<size_t>(3 * orders)) throw Error("chrF statistics have the wrong size");
  return f_score(sum.data(), orders, options_.beta, options_.eps_smoothing, double_quotient);
}

double Chrf::score_float32(const std::vector<float>& sum) const {
  const int orders = options_.char_order + options_.word_order;
  if (sum.size() != static_cast<size_t>(3 * orders)) throw Error("chrF statistics have the wrong size");
  return f_score(sum.data(), orders, options_.beta, options_.eps_smoothing, float_quotient);
}

}  // namespace csan::scoring
