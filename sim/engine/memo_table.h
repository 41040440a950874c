// A run's memo of solved sharing problems (Simulation::Reshare): words that name a problem ->
// where its rates and bounds are kept (an offset into arrays the caller owns). Keys are hashed
// with FNV-1a (Fowler, Noll & Vo), a word at a time, as the caller writes them. Open addressing
// with linear probing; entries are never removed, and a full table keeps what it has.
// Internal to sim/engine; tests: tests/engine/flow_test.cc (repeated contentions).
#ifndef SHARDSIM_ENGINE_MEMO_TABLE_H_
#define SHARDSIM_ENGINE_MEMO_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace shardsim {

class MemoTable {
 public:
  static constexpr uint64_t kHashStart = 1469598103934665603ull;  // FNV-1a offset basis
  static uint64_t Hash(uint64_t h, uint64_t word) { return (h ^ word) * 1099511628211ull; }
  // Writes a key's words through `out` (room for all of them) and hashes them as it goes.
  class KeyWriter {
   public:
    explicit KeyWriter(uint64_t* out) : at_(out) {}
    void operator()(uint64_t word) {
      *at_++ = word;
      hash_ = Hash(hash_, word);
    }
    uint64_t hash() const { return hash_; }

   private:
    uint64_t* at_;
    uint64_t hash_ = kHashStart;
  };

  // The offset stored under `key` (whose Hash is `hash`), or -1; either way *slot is where the
  // probe stopped, for Insert.
  int64_t Find(std::span<const uint64_t> key, uint64_t hash, size_t* slot) {
    if (slots_.empty()) slots_.assign(kSlots, -1);
    size_t s = static_cast<size_t>(hash) & (kSlots - 1);
    for (; slots_[s] >= 0; s = (s + 1) & (kSlots - 1)) {
      const Entry& m = entries_[static_cast<size_t>(slots_[s])];
      if (m.hash == hash && m.key_end - m.key_begin == key.size() && Equal(key, m.key_begin)) {
        *slot = s;
        return static_cast<int64_t>(m.result);
      }
    }
    *slot = s;
    return -1;
  }
  // Whether Insert would store anything.
  bool full() const { return entries_.size() >= kMaxEntries; }
  // Stores `result` under `key`, at the slot that Find(key, hash) returned -1 for (nothing has
  // been inserted since). Does nothing when full.
  void Insert(size_t slot, std::span<const uint64_t> key, uint64_t hash, size_t result) {
    if (full()) return;
    const size_t begin = keys_.size();
    keys_.insert(keys_.end(), key.begin(), key.end());
    slots_[slot] = static_cast<int32_t>(entries_.size());
    entries_.push_back({hash, begin, keys_.size(), result});
  }

 private:
  static constexpr size_t kSlots = 1024;  // a power of two
  static constexpr size_t kMaxEntries = kSlots / 2;
  struct Entry {
    uint64_t hash;
    size_t key_begin, key_end;  // in keys_
    size_t result;
  };
  // A word loop: keys are a dozen words or so, cheaper than a library call.
  bool Equal(std::span<const uint64_t> key, size_t begin) const {
    const uint64_t* stored = keys_.data() + begin;
    for (size_t i = 0; i < key.size(); ++i) {
      if (key[i] != stored[i]) return false;
    }
    return true;
  }

  std::vector<uint64_t> keys_;
  std::vector<Entry> entries_;
  std::vector<int32_t> slots_;  // kSlots: an entries_ index, or -1
};

}  // namespace shardsim

#endif  // SHARDSIM_ENGINE_MEMO_TABLE_H_
