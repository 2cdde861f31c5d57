// TextWriter: text written piece by piece into room sized beforehand, for the heads built on
// every request. A piece is one bounds check and one copy: a literal's length is known when
// compiling, so its copy is a few moves, and a short variable piece is CopySmall's, where
// std::string::append checks capacity and calls memcpy for every piece (about 45 instructions
// each, eleven of them in a response head).
//
// Thread safety: none (a writer is a cursor into one buffer).
#pragma once

#include <charconv>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/copy_small.h"

namespace turnpike {

class TextWriter {
 public:
  // The longest decimal an integer of up to 64 bits writes ("-9223372036854775808").
  static constexpr size_t kMaxDecimal = 20;

  TextWriter(char* out, size_t room) : begin_(out), p_(out), end_(out + room) {}

  // A piece that does not fit is dropped, with every later one: the text stays a prefix of what
  // was written, and the writer reports overflowed().
  [[gnu::always_inline]] void Put(std::string_view text) {
    if (text.size() > static_cast<size_t>(end_ - p_)) {
      overflowed_ = true;
      end_ = p_;
      return;
    }
    CopySmall(p_, text.data(), text.size());
    p_ += text.size();
  }
  void Put(char c) { Put(std::string_view(&c, 1)); }
  template <std::integral T>
  void PutDecimal(T value) {
    if (static_cast<size_t>(end_ - p_) >= kMaxDecimal) {
      p_ = std::to_chars(p_, p_ + kMaxDecimal, value).ptr;
      return;
    }
    char digits[kMaxDecimal];
    const char* end = std::to_chars(digits, digits + kMaxDecimal, value).ptr;
    Put(std::string_view(digits, static_cast<size_t>(end - digits)));
  }

  bool overflowed() const { return overflowed_; }
  size_t size() const { return static_cast<size_t>(p_ - begin_); }
  std::string_view text() const { return {begin_, size()}; }

 private:
  char* begin_;
  char* p_;
  char* end_;
  bool overflowed_ = false;
};

// Replaces `out`'s text (its capacity kept) with what `write(TextWriter&)` writes. `bound` is the
// room first offered: text that does not fit is written again into more than twice the room.
template <typename Write>
void WriteText(std::string& out, size_t bound, Write&& write) {
  for (size_t room = bound;; room = room * 2 + 64) {
    out.resize(room);
    TextWriter w(out.data(), room);
    write(w);
    if (!w.overflowed()) {
      out.resize(w.size());
      return;
    }
  }
}

}  // namespace turnpike
