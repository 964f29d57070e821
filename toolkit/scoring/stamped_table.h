// A reusable open-addressing hash table for per-segment work: reset() is O(1) (a new
// stamp invalidates every slot), so one table serves millions of short segments
// without clearing or reallocating. Sized up front for the number of keys to come.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace csan::scoring {

inline uint64_t mix_hash(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

struct KeyHash {
  uint64_t operator()(uint64_t key) const { return mix_hash(key); }
  uint64_t operator()(unsigned __int128 key) const {
    return mix_hash(static_cast<uint64_t>(key) ^ mix_hash(static_cast<uint64_t>(key >> 64)));
  }
  template <class Char>
  uint64_t operator()(std::basic_string_view<Char> text) const {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over code units
    for (Char c : text) h = (h ^ static_cast<uint64_t>(c)) * 0x100000001b3ULL;
    return mix_hash(h);
  }
  template <class Char>
  uint64_t operator()(const std::basic_string<Char>& text) const {
    return (*this)(std::basic_string_view<Char>(text));
  }
};

// Each slot carries two small counters whose meaning is the caller's.
template <class Key>
class StampedTable {
 public:
  struct Slot {
    Key key{};
    uint32_t stamp = 0;
    int32_t first = 0;
    int32_t second = 0;
  };

  // Forget every key; the next `expected` insertions will not need to grow the table.
  void reset(size_t expected) {
    size_t want = 16;
    while (want < 2 * expected) want <<= 1;
    if (want > slots_.size() || stamp_ == UINT32_MAX) {
      slots_.assign(std::max(want, slots_.size()), Slot{});
      stamp_ = 0;
    }
    mask_ = slots_.size() - 1;
    ++stamp_;
  }

  // The slot of `key`, created with zero counters if absent.
  Slot& get(const Key& key) {
    size_t i = KeyHash{}(key) & mask_;
    while (true) {
      Slot& slot = slots_[i];
      if (slot.stamp != stamp_) {
        slot.key = key;
        slot.stamp = stamp_;
        slot.first = 0;
        slot.second = 0;
        return slot;
      }
      if (slot.key == key) return slot;
      i = (i + 1) & mask_;
    }
  }

  // The slot of `key`, or nullptr.
  Slot* find(const Key& key) {
    size_t i = KeyHash{}(key) & mask_;
    while (true) {
      Slot& slot = slots_[i];
      if (slot.stamp != stamp_) return nullptr;
      if (slot.key == key) return &slot;
      i = (i + 1) & mask_;
    }
  }

 private:
  std::vector<Slot> slots_;
  uint32_t stamp_ = 0;
  size_t mask_ = 0;
};

}  // namespace csan::scoring
