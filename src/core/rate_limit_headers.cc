#include "core/rate_limit_headers.h"

#include <algorithm>

#include "common/text_writer.h"

namespace turnpike::core {
namespace {

struct Names {
  std::string_view limit, remaining, reset;
};
constexpr Names kRequests{"x-ratelimit-limit-requests: ", "x-ratelimit-remaining-requests: ",
                          "x-ratelimit-reset-requests: "};
constexpr Names kTokens{
    "x-ratelimit-limit-tokens: ", "x-ratelimit-remaining-tokens: ", "x-ratelimit-reset-tokens: "};

// Three lines: at most 3 * (31 + 20 + 2) + 31 bytes.
void PutDecision(TextWriter& w, const governance::RateDecision& d, const Names& names) {
  if (d.limit == 0) return;
  w.Put(names.limit);
  w.PutDecimal(d.limit);
  w.Put("\r\n");
  w.Put(names.remaining);
  w.PutDecimal(d.remaining);
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
  TextWriter w(out, sizeof out);
  const int64_t ms = std::max<int64_t>(duration_cast<milliseconds>(reset).count(), 0);
  if (ms < 1000) {
    w.PutDecimal(ms);
    w.Put("ms");
  } else if (const int64_t s = (ms + 999) / 1000; s < 60) {
    w.PutDecimal(s);
    w.Put("s");
  } else {
    w.PutDecimal(s / 60);
    w.Put("m");
    w.PutDecimal(s % 60);
    w.Put("s");
  }
  return w.text();
}

void AddRateLimitHeaders(http::ResponseHeaders& headers, const governance::RateDecision& requests,
                         const governance::RateDecision& tokens, bool rate_refused) {
  char block[2 * 200];
  TextWriter w(block, sizeof block);
  PutDecision(w, requests, kRequests);
  PutDecision(w, tokens, kTokens);
  if (!w.text().empty()) headers.AddLines(w.text());
  if (!rate_refused) return;
  const governance::RateDecision& d = !requests.allowed && requests.limit != 0 ? requests : tokens;
  if (d.limit != 0 && !d.exceeds_limit) headers.Add("Retry-After", d.RetryAfterSeconds());
}

}  // namespace turnpike::core
