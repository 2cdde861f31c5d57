// CopySmall: a copy of a few bytes without a call into libc. The texts a hot path copies most
// (ids, names, header values) are under 32 bytes, where memcpy's call and size dispatch cost
// more than the copy.
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <cstring>

namespace turnpike {

// Copies n bytes with at most two (overlapping) fixed-size moves when n <= 32 (memcpy above).
// Reads and writes only [s, s + n) and [d, d + n); n may be 0 (then s may be null).
[[gnu::always_inline]] inline void CopySmall(char* d, const char* s, size_t n) {
  if (n >= 16) {
    if (n > 32) {
      std::memcpy(d, s, n);
      return;
    }
    std::memcpy(d, s, 16);
    std::memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else if (n > 0) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

}  // namespace turnpike
