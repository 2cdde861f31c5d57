// Internal to redis/: the units one replica leased from one shared rate window in the last
// minute (lease_rate.h). After a Redis restart the window is gone; the replica re-registers this
// sum (kRateScript, lease_script.h) so the rebuilt window counts what was already admitted.
//
// Why the sum is enough: the script grants only units that fit the window (the TAT never passes
// now + 1 min), so the fleet's debt at any time is at most the units leased in the last minute
// times the emission interval; summed over the replicas, the re-registered units bound it from
// above. Units given back are not subtracted (never less, sometimes more than the lost window
// held: a rebuilt window may refuse a little early, never admits more).
//
// Fixed capacity, no allocation. When full, the two oldest entries merge into one at the newer
// time: those units are counted a little longer, never shorter.
// Threads: one owner (the Redis client's thread); no synchronisation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace turnpike::redis {

class RecentGrants {
 public:
  static constexpr size_t kCapacity = 32;
  static constexpr int64_t kWindowNs = 60'000'000'000;

  // `units` (> 0) leased at `now_ns` (monotonic, not before the last Add).
  void Add(int64_t now_ns, int64_t units) {
    Expire(now_ns);
    if (size_ == kCapacity) {
      entries_[1].units += entries_[0].units;
      Drop(1);
    }
    entries_[size_++] = {now_ns, units};
  }

  // The units leased in (now - 1 min, now].
  int64_t Sum(int64_t now_ns) const {
    int64_t sum = 0;
    for (size_t i = 0; i < size_; ++i) {
      if (entries_[i].at_ns > now_ns - kWindowNs) sum += entries_[i].units;
    }
    return sum;
  }

  size_t size() const { return size_; }

 private:
  struct Entry {
    int64_t at_ns;
    int64_t units;
  };

  void Expire(int64_t now_ns) {
    size_t old = 0;
    while (old < size_ && entries_[old].at_ns <= now_ns - kWindowNs) ++old;
    Drop(old);
  }
  void Drop(size_t n) {
    for (size_t i = n; i < size_; ++i) entries_[i - n] = entries_[i];
    size_ -= n;
  }

  std::array<Entry, kCapacity> entries_{};
  size_t size_ = 0;
};

}  // namespace turnpike::redis
