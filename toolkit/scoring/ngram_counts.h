// Exact n-gram counting without per-n-gram strings. The items of one segment (tokens,
// characters, words) are interned as small ids; an n-gram is the ids packed into one
// integer (or, when that would exceed 128 bits, a string of ids); counts live in a
// reusable hash table. Everything here is per thread and reused across segments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/scoring/stamped_table.h"

namespace csan::scoring {

// Maps the distinct items of one segment to 0, 1, 2, ... in order of first appearance.
template <class Item>
class Interner {
 public:
  void reset(size_t expected_items) {
    table_.reset(expected_items);
    size_ = 0;
  }
  uint32_t operator()(const Item& item) {
    auto& slot = table_.get(item);
    if (slot.second == 0) {
      slot.second = 1;
      slot.first = static_cast<int32_t>(size_++);
    }
    return static_cast<uint32_t>(slot.first);
  }
  size_t size() const { return size_; }
  // Bits needed for one id.
  int id_bits() const {
    int bits = 1;
    while (bits < 32 && (size_t{1} << bits) < size_) ++bits;
    return bits;
  }

 private:
  StampedTable<Item> table_;
  size_t size_ = 0;
};

using Key128 = unsigned __int128;

// keys holds the n-grams of order n-1 of `ids` (order 0: empty and filled here with
// order 1); this turns them into order n: keys[i] = keys[i] . ids[i + n - 1].
template <class Key>
void next_order_keys(std::vector<Key>& keys, const std::vector<uint32_t>& ids, int n, int bits) {
  if (n == 1) {
    keys.assign(ids.begin(), ids.end());
    return;
  }
  if (ids.size() < static_cast<size_t>(n)) {
    keys.clear();
    return;
  }
  size_t count = ids.size() - n + 1;
  for (size_t i = 0; i < count; ++i) keys[i] = (keys[i] << bits) | ids[i + n - 1];
  keys.resize(count);
}

template <>
inline void next_order_keys<std::u32string>(std::vector<std::u32string>& keys, const std::vector<uint32_t>& ids,
                                            int n, int /*bits*/) {
  if (ids.size() < static_cast<size_t>(n)) {
    keys.clear();
    return;
  }
  size_t count = ids.size() - n + 1;
  if (n == 1) keys.assign(count, std::u32string());
  for (size_t i = 0; i < count; ++i) keys[i].push_back(static_cast<char32_t>(ids[i + n - 1]));
  keys.resize(count);
}

// Multiset operations over one order's keys.
template <class Key>
class NGramMatcher {
 public:
  // Σ over distinct n-grams of min(hyp count, ref count).
  int64_t matches(const std::vector<Key>& hyp, const std::vector<Key>& ref) {
    counts_.reset(ref.size());
    for (const Key& key : ref) ++counts_.get(key).first;
    return take(hyp);
  }

  // Builds the reference side from several references: each n-gram's count is its
  // maximum over them (BLEU). Call begin_max, add_reference per reference, then take.
  void begin_max(size_t total_keys) { counts_.reset(total_keys); }
  void add_reference(const std::vector<Key>& ref) {
    one_ref_.reset(ref.size());
    for (const Key& key : ref) {
      int32_t count = ++one_ref_.get(key).first;
      auto& slot = counts_.get(key);
      if (slot.first < count) slot.first = count;
    }
  }
  // Clipped matches of hyp against the reference side built so far (consumes it).
  int64_t take(const std::vector<Key>& hyp) {
    int64_t matched = 0;
    for (const Key& key : hyp) {
      auto* slot = counts_.find(key);
      if (slot && slot->first > 0) {
        --slot->first;
        ++matched;
      }
    }
    return matched;
  }

 private:
  StampedTable<Key> counts_;
  StampedTable<Key> one_ref_;
};

// Calls fn(Key{}) with the narrowest key type that holds n ids of `bits` bits each.
template <class Fn>
decltype(auto) with_ngram_key(int n, int bits, Fn&& fn) {
  if (n * bits <= 64) return fn(uint64_t{});
  if (n * bits <= 128) return fn(Key128{});
  return fn(std::u32string{});
}

}  // namespace csan::scoring
