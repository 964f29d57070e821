#include "toolkit/scoring/ter_edits.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace csan::scoring {
namespace {

constexpr int kMaxShiftSize = 10;
constexpr int kMaxShiftDistance = 50;
constexpr int kBeamWidth = 25;
constexpr int kMaxShiftCandidates = 1000;
// Larger than any real cost; cells outside the beam keep it, as in sacreBLEU (1e16).
constexpr int32_t kInfinity = 1 << 29;

enum Op : char { kNone = ' ', kSub = 's', kIns = 'i', kDel = 'd', kUndefined = 'x' };

// The beam DP for one (hypothesis length, reference) pair. Rows depend only on the
// hypothesis prefix, so a shifted candidate reuses the rows of the prefix it shares
// with the current hypothesis (sacreBLEU gets the same effect from its row cache).
//
// Only the cells inside each row's beam are stored: every other cell is (infinity,
// undefined) in sacreBLEU's full matrix and is never written, so reading it as
// kInfinity gives the same results with memory linear in the sentence length (the
// full matrix of a 50k-word line would take 12 GB).
class BeamEditDistance {
 public:
  BeamEditDistance(const std::vector<uint32_t>& ref, size_t hyp_len) : ref_(ref), n_(hyp_len), m_(ref.size()) {
    ratio_ = n_ ? static_cast<double>(m_) / static_cast<double>(n_) : 1.0;
    beam_ = kBeamWidth < ratio_ / 2 ? static_cast<int64_t>(std::ceil(ratio_ / 2 + kBeamWidth)) : kBeamWidth;
    rows_.resize(n_ + 1);
    rows_[0] = {0, m_ + 1, 0};
    size_t cells = m_ + 1;
    for (size_t i = 1; i <= n_; ++i) {
      auto [begin, end] = band(i);
      rows_[i] = {begin, end, cells};
      cells += end - begin;
    }
    cost_.assign(cells, kInfinity);
    op_.assign(cells, kUndefined);
    for (size_t j = 0; j <= m_; ++j) {
      cost_[j] = static_cast<int32_t>(j);
      op_[j] = kIns;
    }
    for (auto& row : scratch_) row.assign(m_ + 1, kInfinity);
  }

  // Full DP for hyp, keeping every row; returns the distance and fills trace_.
  int32_t compute_with_trace(const std::vector<uint32_t>& hyp) {
    for (size_t i = 1; i <= n_; ++i) {
      const Row& row = rows_[i];
      int32_t* cost = &cost_[row.offset] - row.begin;  // cost[j] for j in [begin, end)
      char* op = &op_[row.offset] - row.begin;
      std::fill(cost + row.begin, cost + row.end, kInfinity);
      std::fill(op + row.begin, op + row.end, kUndefined);
      for (size_t j = row.begin; j < row.end; ++j) {
        if (j == 0) {
          cost[0] = cost_at(i - 1, 0) + 1;
          op[0] = kDel;
          continue;
        }
        bool same = hyp[i - 1] == ref_[j - 1];
        int32_t diagonal = cost_at(i - 1, j - 1) + (same ? 0 : 1);
        int32_t deletion = cost_at(i - 1, j) + 1;
        int32_t insertion = (j > row.begin ? cost[j - 1] : kInfinity) + 1;
        // Diagonal first, then deletion, then insertion; only a strictly smaller cost wins.
        if (cost[j] > diagonal) {
          cost[j] = diagonal;
          op[j] = same ? kNone : kSub;
        }
        if (cost[j] > deletion) {
          cost[j] = deletion;
          op[j] = kDel;
        }
        if (cost[j] > insertion) {
          cost[j] = insertion;
          op[j] = kIns;
        }
      }
    }
    trace_.clear();
    size_t i = n_, j = m_;
    while (i > 0 || j > 0) {
      char o = op_at(i, j);
      trace_.push_back(o);
      if (o == kNone || o == kSub) {
        --i;
        --j;
      } else if (o == kIns) {
        --j;
      } else {
        --i;
      }
    }
    std::reverse(trace_.begin(), trace_.end());
    return cost_at(n_, m_);
  }

  // Distance of `hyp`, whose first `shared` words equal those of the hypothesis last
  // given to compute_with_trace.
  int32_t distance_from_prefix(const std::vector<uint32_t>& hyp, size_t shared) {
    if (shared >= n_) return cost_at(n_, m_);
    // Scratch rows are infinite outside the band last written into them, so only that
    // band needs resetting (long lines have a band much narrower than the row).
    int k = 0;  // which scratch row receives the next row
    auto take_scratch = [&](size_t begin, size_t end) {
      int32_t* row = scratch_[k].data();
      std::fill(row + written_[k].first, row + written_[k].second, kInfinity);
      written_[k] = {begin, end};
      k ^= 1;
      return row;
    };
    const Row& start = rows_[shared];
    int32_t* first = take_scratch(start.begin, start.end);
    std::copy(&cost_[start.offset], &cost_[start.offset] + (start.end - start.begin), first + start.begin);
    const int32_t* prev = first;
    for (size_t i = shared + 1; i <= n_; ++i) {
      const Row& row = rows_[i];
      int32_t* cur = take_scratch(row.begin, row.end);
      for (size_t j = row.begin; j < row.end; ++j) {
        if (j == 0) {
          cur[0] = prev[0] + 1;
          continue;
        }
        int32_t best = prev[j - 1] + (hyp[i - 1] == ref_[j - 1] ? 0 : 1);
        best = std::min(best, prev[j] + 1);
        best = std::min(best, cur[j - 1] + 1);
        cur[j] = std::min(best, kInfinity);
      }
      prev = cur;
    }
    return prev[m_];
  }

  const std::vector<char>& trace() const { return trace_; }

 private:
  // Row i's stored cells: columns [begin, end), at cost_[offset] and op_[offset].
  struct Row {
    size_t begin, end, offset;
  };

  int32_t cost_at(size_t i, size_t j) const {
    const Row& row = rows_[i];
    return j >= row.begin && j < row.end ? cost_[row.offset + (j - row.begin)] : kInfinity;
  }
  char op_at(size_t i, size_t j) const {
    const Row& row = rows_[i];
    return j >= row.begin && j < row.end ? op_[row.offset + (j - row.begin)] : static_cast<char>(kUndefined);
  }

  std::pair<size_t, size_t> band(size_t i) const {
    if (i == n_) {
      int64_t diagonal = static_cast<int64_t>(std::floor(static_cast<double>(i) * ratio_));
      return {static_cast<size_t>(std::max<int64_t>(0, diagonal - beam_)), m_ + 1};
    }
    int64_t diagonal = static_cast<int64_t>(std::floor(static_cast<double>(i) * ratio_));
    int64_t min_j = std::max<int64_t>(0, diagonal - beam_);
    int64_t max_j = std::min<int64_t>(static_cast<int64_t>(m_) + 1, diagonal + beam_);
    return {static_cast<size_t>(min_j), static_cast<size_t>(std::max(min_j, max_j))};
  }

  const std::vector<uint32_t>& ref_;
  size_t n_, m_;
  double ratio_;
  int64_t beam_;
  std::vector<Row> rows_;
  std::vector<int32_t> cost_;
  std::vector<char> op_;
  std::vector<char> trace_;
  std::vector<int32_t> scratch_[2];
  std::pair<size_t, size_t> written_[2] = {{0, 0}, {0, 0}};
};

struct Alignment {
  std::vector<int> align;  // per reference position: the hypothesis position (may be -1)
  std::vector<char> ref_err, hyp_err;
};

// The alignment of the trace read as rewriting the reference into the hypothesis
// (insertions and deletions swapped).
Alignment trace_to_alignment(const std::vector<char>& trace) {
  Alignment a;
  int hp = -1, rp = -1;
  for (char op : trace) {
    if (op == kIns)
      op = kDel;
    else if (op == kDel)
      op = kIns;
    if (op == kNone || op == kSub) {
      ++hp;
      ++rp;
      a.align.push_back(hp);
      char err = op == kSub;
      a.hyp_err.push_back(err);
      a.ref_err.push_back(err);
    } else if (op == kIns) {
      ++hp;
      a.hyp_err.push_back(1);
    } else {
      ++rp;
      a.align.push_back(hp);
      a.ref_err.push_back(1);
    }
  }
  return a;
}

void perform_shift(const std::vector<uint32_t>& words, size_t start, size_t length, size_t target,
                   std::vector<uint32_t>& out) {
  out.clear();
  auto append = [&](size_t from, size_t to) { out.insert(out.end(), words.begin() + from, words.begin() + to); };
  if (target < start) {
    append(0, target);
    append(start, start + length);
    append(target, start);
    append(start + length, words.size());
  } else if (target > start + length) {
    append(0, start);
    append(start + length, target);
    append(start, start + length);
    append(target, words.size());
  } else {
    // Python slices clamp: length + target may run past the end.
    size_t middle_end = std::min(length + target, words.size());
    append(0, start);
    append(start + length, middle_end);
    append(start, start + length);
    append(middle_end, words.size());
  }
}

bool all_zero(const std::vector<char>& flags, size_t from, size_t length) {
  for (size_t k = from; k < from + length; ++k) {
    if (flags[k]) return false;
  }
  return true;
}

struct ShiftRound {
  int32_t delta = 0;
  std::vector<uint32_t> shifted;
};

// One round: the best shift of `hyp` (ranked by gain, length, -start, -target).
ShiftRound best_shift(const std::vector<uint32_t>& hyp, const std::vector<uint32_t>& ref, BeamEditDistance& ed,
                      int& checked) {
  const int32_t base = ed.compute_with_trace(hyp);
  const Alignment a = trace_to_alignment(ed.trace());
  const size_t n = hyp.size(), m = ref.size();

  bool have_best = false;
  std::tuple<int32_t, size_t, long, long> best_key;
  ShiftRound best{0, hyp};
  std::vector<uint32_t> shifted;

  for (size_t h = 0; h < n && checked < kMaxShiftCandidates; ++h) {
    // Only references positions within kMaxShiftDistance of h are paired with it.
    size_t r_begin = h > static_cast<size_t>(kMaxShiftDistance) ? h - kMaxShiftDistance : 0;
    size_t r_end = std::min(m, h + kMaxShiftDistance + 1);
    for (size_t r = r_begin; r < r_end; ++r) {
      if (hyp[h] != ref[r]) continue;
      for (size_t length = 1; length <= static_cast<size_t>(kMaxShiftSize); ++length) {
        if (hyp[h + length - 1] != ref[r + length - 1]) break;
        // Candidate (h, r, length).
        bool skip = all_zero(a.hyp_err, h, length) || all_zero(a.ref_err, r, length) ||
                    (static_cast<long>(h) <= a.align[r] && a.align[r] < static_cast<long>(h + length));
        if (!skip) {
          long prev_target = -1;
          for (long offset = -1; offset < static_cast<long>(length); ++offset) {
            long target = static_cast<long>(r) + offset == -1 ? 0 : a.align[r + offset] + 1;
            if (target == prev_target) continue;
            prev_target = target;
            perform_shift(hyp, h, length, static_cast<size_t>(target), shifted);
            size_t shared = std::min(h, static_cast<size_t>(target));
            int32_t delta = base - ed.distance_from_prefix(shifted, shared);
            ++checked;
            auto key = std::make_tuple(delta, length, -static_cast<long>(h), -target);
            if (!have_best || key > best_key) {
              have_best = true;
              best_key = key;
              best.delta = delta;
              best.shifted = shifted;
            }
          }
          if (checked >= kMaxShiftCandidates) return best;
        }
        if (h + length == n || r + length == m) break;
      }
    }
  }
  return best;
}

}  // namespace

int64_t ter_edits(const std::vector<uint32_t>& hyp, const std::vector<uint32_t>& ref) {
  if (ref.empty()) return static_cast<int64_t>(hyp.size());
  BeamEditDistance ed(ref, hyp.size());
  std::vector<uint32_t> words = hyp;
  int checked = 0;
  int64_t shifts = 0;
  while (true) {
    ShiftRound round = best_shift(words, ref, ed, checked);
    // Past the candidate cap sacreBLEU stops and discards this round's shift.
    if (checked >= kMaxShiftCandidates) break;
    if (round.delta <= 0) break;
    ++shifts;
    words = std::move(round.shifted);
  }
  return ed.compute_with_trace(words) + shifts;
}

}  // namespace csan::scoring
