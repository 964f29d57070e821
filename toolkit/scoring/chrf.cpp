#include "toolkit/scoring/chrf.h"

#include "toolkit/core/error.h"
#include "toolkit/scoring/ngram_bag.h"
#include "toolkit/scoring/parallel.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {
namespace {

bool is_ascii_punctuation(char32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

// sacreBLEU's _compute_f_score; `quotient` is m / h in double (exact path) or in
// float32 (bootstrap path), which is the only place the two differ.
template <class Stat, class Quotient>
double f_score(const Stat* stats, int orders, int beta, bool eps_smoothing, Quotient quotient) {
  const double eps = 1e-16;
  const int factor = beta * beta;
  double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (int i = 0; i < orders; ++i) {
    Stat n_hyp = stats[3 * i], n_ref = stats[3 * i + 1], n_match = stats[3 * i + 2];
    double prec = n_hyp > 0 ? quotient(n_match, n_hyp) : eps;
    double rec = n_ref > 0 ? quotient(n_match, n_ref) : eps;
    double denom = factor * prec + rec;
    score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
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
  score = (1 + factor) * avg_prec * avg_rec;
  score /= (factor * avg_prec) + avg_rec;
  return 100 * score;
}

double double_quotient(double a, double b) { return a / b; }
double float_quotient(float a, float b) { return static_cast<double>(a / b); }

// One sequence's n-gram bags for orders 1..max_order, keyed by `Key`.
template <class Key>
struct Bags {
  std::vector<std::vector<Key>> by_order;
  Bags(const std::vector<uint32_t>& ids, int max_order, int bits) : by_order(max_order) {
    for (int n = 1; n <= max_order; ++n) ngram_bag(ids, n, bits, by_order[n - 1]);
  }
};

// Appends [hyp, ref, match] per order of hyp against one reference.
template <class Key>
void append_match_stats(const Bags<Key>& hyp, const Bags<Key>& ref, Stats& stats) {
  for (size_t n = 0; n < hyp.by_order.size(); ++n) {
    const auto& h = hyp.by_order[n];
    const auto& r = ref.by_order[n];
    // A reference without n-grams of this order makes the hypothesis count 0.
    stats.push_back(r.empty() ? 0.0 : static_cast<double>(h.size()));
    stats.push_back(static_cast<double>(r.size()));
    stats.push_back(static_cast<double>(intersection_size(h, r)));
  }
}

// Per reference, the stats of one kind of n-gram (chars or words), orders 1..max_order.
template <class Item>
std::vector<Stats> per_reference_stats(const std::vector<Item>& hyp_items,
                                       const std::vector<std::vector<Item>>& ref_items, int max_order) {
  std::vector<Stats> result(ref_items.size());
  if (max_order == 0) return result;
  Interner<Item> interner;
  auto to_ids = [&](const std::vector<Item>& items) {
    std::vector<uint32_t> ids;
    ids.reserve(items.size());
    for (const Item& item : items) ids.push_back(interner(item));
    return ids;
  };
  std::vector<uint32_t> hyp_ids = to_ids(hyp_items);
  std::vector<std::vector<uint32_t>> ref_ids;
  for (const auto& items : ref_items) ref_ids.push_back(to_ids(items));
  int bits = interner.id_bits();
  with_ngram_key(max_order, bits, [&](auto key) {
    using Key = decltype(key);
    Bags<Key> hyp_bags(hyp_ids, max_order, bits);
    for (size_t r = 0; r < ref_ids.size(); ++r) {
      append_match_stats(hyp_bags, Bags<Key>(ref_ids[r], max_order, bits), result[r]);
    }
    return 0;
  });
  return result;
}

std::vector<char32_t> chrf_chars(std::u32string_view line, bool keep_whitespace) {
  std::vector<char32_t> chars;
  chars.reserve(line.size());
  for (char32_t c : line) {
    if (keep_whitespace || !is_space(c)) chars.push_back(c);
  }
  return chars;
}

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
      {"case", "c", options_.lowercase ? "lc" : "mixed"},
      {"eff", "e", options_.eps_smoothing ? "no" : "yes"},
      {"nc", "nc", std::to_string(options_.char_order)},
      {"nw", "nw", std::to_string(options_.word_order)},
      {"space", "s", options_.whitespace ? "yes" : "no"},
  };
}

Stats Chrf::best_reference_stats(std::u32string_view hyp, const std::vector<std::u32string>& refs) const {
  std::vector<std::vector<char32_t>> ref_chars;
  std::vector<std::vector<std::u32string_view>> ref_words;
  for (const auto& ref : refs) {
    ref_chars.push_back(chrf_chars(ref, options_.whitespace));
    if (options_.word_order > 0) ref_words.push_back(chrf_words(ref));
  }
  std::vector<Stats> char_stats =
      per_reference_stats(chrf_chars(hyp, options_.whitespace), ref_chars, options_.char_order);
  std::vector<Stats> word_stats;
  if (options_.word_order > 0) word_stats = per_reference_stats(chrf_words(hyp), ref_words, options_.word_order);

  const int orders = options_.char_order + options_.word_order;
  Stats best;
  double best_f = -1.0;
  for (size_t r = 0; r < refs.size(); ++r) {
    Stats stats = std::move(char_stats[r]);
    if (options_.word_order > 0) stats.insert(stats.end(), word_stats[r].begin(), word_stats[r].end());
    // Ties keep the earlier reference.
    double f = f_score(stats.data(), orders, options_.beta, options_.eps_smoothing, double_quotient);
    if (f > best_f) {
      best_f = f;
      best = std::move(stats);
    }
  }
  return best;
}

std::vector<Stats> Chrf::segment_stats(const std::vector<std::string>& hyps,
                                       const std::vector<std::vector<std::string>>& refs) const {
  for (const auto& stream : refs) {
    if (stream.size() != hyps.size()) throw Error("System and reference streams have different lengths.");
  }
  if (refs.empty()) throw Error("chrF needs at least one reference stream");
  std::vector<Stats> all(hyps.size());
  auto preprocess = [&](const std::string& line) {
    std::u32string text = to_u32(line);
    return options_.lowercase ? lower(text) : text;
  };
  parallel_for(hyps.size(), [&](size_t begin, size_t end) {
    std::vector<std::u32string> ref_texts(refs.size());
    for (size_t i = begin; i < end; ++i) {
      for (size_t r = 0; r < refs.size(); ++r) ref_texts[r] = preprocess(refs[r][i]);
      all[i] = best_reference_stats(preprocess(hyps[i]), ref_texts);
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
