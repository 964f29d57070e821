// Exact n-gram multisets without per-n-gram strings: the items of one segment (tokens,
// characters, words) are interned as small ids, each n-gram is packed into one integer
// key (or a string of ids when it does not fit in 128 bits), and a multiset is the
// sorted vector of its keys, so intersections (min counts) and unions (max counts) are
// linear merges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace csan::scoring {

// Maps the distinct items of one segment to 0, 1, 2, ... in order of first appearance.
template <class Item>
class Interner {
 public:
  void clear() { ids_.clear(); }
  uint32_t operator()(const Item& item) {
    return ids_.try_emplace(item, static_cast<uint32_t>(ids_.size())).first->second;
  }
  size_t size() const { return ids_.size(); }
  // Bits needed for one id.
  int id_bits() const {
    int bits = 1;
    while (bits < 32 && (size_t{1} << bits) < ids_.size()) ++bits;
    return bits;
  }

 private:
  std::unordered_map<Item, uint32_t> ids_;
};

using Key128 = unsigned __int128;

template <class Key>
inline Key pack_ngram(const uint32_t* ids, int n, int bits) {
  Key key = 0;
  for (int i = 0; i < n; ++i) key = (key << bits) | ids[i];
  return key;
}

template <>
inline std::u32string pack_ngram<std::u32string>(const uint32_t* ids, int n, int /*bits*/) {
  return std::u32string(ids, ids + n);
}

// The sorted keys of all n-grams of `ids` (one per window, with multiplicity).
template <class Key>
void ngram_bag(const std::vector<uint32_t>& ids, int n, int bits, std::vector<Key>& bag) {
  bag.clear();
  if (ids.size() < static_cast<size_t>(n)) return;
  bag.reserve(ids.size() - n + 1);
  for (size_t i = 0; i + n <= ids.size(); ++i) bag.push_back(pack_ngram<Key>(ids.data() + i, n, bits));
  std::sort(bag.begin(), bag.end());
}

// Σ over distinct keys of min(count in a, count in b).
template <class Key>
int64_t intersection_size(const std::vector<Key>& a, const std::vector<Key>& b) {
  int64_t matches = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++matches;
      ++i;
      ++j;
    }
  }
  return matches;
}

// acc becomes the multiset union with max counts (std::set_union keeps max(m, n) copies).
template <class Key>
void union_max(std::vector<Key>& acc, const std::vector<Key>& other, std::vector<Key>& scratch) {
  scratch.clear();
  std::set_union(acc.begin(), acc.end(), other.begin(), other.end(), std::back_inserter(scratch));
  acc.swap(scratch);
}

// Calls fn(Key{}) with the narrowest key type that holds n ids of `bits` bits each.
template <class Fn>
decltype(auto) with_ngram_key(int n, int bits, Fn&& fn) {
  if (n * bits <= 64) return fn(uint64_t{});
  if (n * bits <= 128) return fn(Key128{});
  return fn(std::u32string{});
}

}  // namespace csan::scoring
