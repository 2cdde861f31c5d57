#include "core/rate_limit_headers.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace turnpike::core {
namespace {

// Appends to a fixed buffer; the caller sizes it for the worst case.
class LineWriter {
 public:
  explicit LineWriter(char* out) : begin_(out), p_(out) {}
  void Put(std::string_view text) {
    std::memcpy(p_, text.data(), text.size());
    p_ += text.size();
  }
  void Put(int64_t value) { p_ = std::to_chars(p_, p_ + 20, value).ptr; }
  std::string_view text() const { return {begin_, static_cast<size_t>(p_ - begin_)}; }

 private:
  char* begin_;
  char* p_;
};

struct Names {
  std::string_view limit, remaining, reset;
};
constexpr Names kRequests{"x-ratelimit-limit-requests: ", "x-ratelimit-remaining-requests: ",
                          "x-ratelimit-reset-requests: "};
constexpr Names kTokens{
    "x-ratelimit-limit-tokens: ", "x-ratelimit-remaining-tokens: ", "x-ratelimit-reset-tokens: "};

// Three lines: at most 3 * (31 + 20 + 2) + 31 bytes.
void PutDecision(LineWriter& w, const governance::RateDecision& d, const Names& names) {
  if (d.limit == 0) return;
  w.Put(names.limit);
  w.Put(d.limit);
  w.Put("\r\n");
  w.Put(names.remaining);
  w.Put(d.remaining);
  w.Put("\r\n");
  char reset[32];
  w.Put(names.reset);
  w.Put(FormatRateReset(d.reset, reset));
  w.Put("\r\n");
}

}  // namespace

std::string_view FormatRateReset(std::chrono::nanoseconds reset, char (&out)[32]) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  LineWriter w(out);
  const int64_t ms = std::max<int64_t>(duration_cast<milliseconds>(reset).count(), 0);
  if (ms < 1000) {
    w.Put(ms);
    w.Put("ms");
  } else if (const int64_t s = (ms + 999) / 1000; s < 60) {
    w.Put(s);
    w.Put("s");
  } else {
    w.Put(s / 60);
    w.Put("m");
    w.Put(s % 60);
    w.Put("s");
  }
  return w.text();
}

void AddRateLimitHeaders(http::ResponseHeaders& headers, const governance::RateDecision& requests,
                         const governance::RateDecision& tokens, bool rate_refused) {
  char block[2 * 200];
  LineWriter w(block);
  PutDecision(w, requests, kRequests);
  PutDecision(w, tokens, kTokens);
  if (!w.text().empty()) headers.AddLines(w.text());
  if (!rate_refused) return;
  const governance::RateDecision& d = !requests.allowed && requests.limit != 0 ? requests : tokens;
  if (d.limit != 0 && !d.exceeds_limit) headers.Add("Retry-After", d.RetryAfterSeconds());
}

}  // namespace turnpike::core
