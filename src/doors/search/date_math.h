// Elasticsearch's date math for the bounds of a `range` query on a date field, resolved by the
// DSL parser to epoch milliseconds so that no backend ever sees an expression:
//
//   <anchor> [ (+|-)[N]<unit> | /<unit> ]*        anchor: `now`, or `<date>||`
//   units: y (years), M (months), w (weeks), d (days), h and H (hours), m (minutes), s (seconds)
//
// as ES's JavaDateMathParser reads it: N defaults to 1; `/` rounds to the start of the unit
// (weeks start on Monday, ISO), or with `round_up` to its last millisecond; several steps
// apply left to right. `round_up` is ES's rule per bound (range query docs, "Date math and
// rounding"): `gt` and `lte` round up, `gte` and `lt` round down. A bound that is a date
// string without math follows the same rule for its missing components ("Missing date
// components": `lte: "2024-01-31"` is 2024-01-31T23:59:59.999, `gt` likewise; `gte`/`lt`
// take the start of the day). Epoch milliseconds (a number or digit string) are exact.
//
// Time zones: `offset_ms` is the range's `time_zone` as a fixed UTC offset; it converts dates
// written without an offset and is the zone rounding happens in (`now/d` with +01:00 is
// local midnight); it never changes `now` itself or a date that carries its own offset.
// Named zones (Europe/Paris) are refused: this build has no time zone database (GCC 12's
// libstdc++ has no std::chrono::tzdb), and a wrong DST rule would silently move bounds.
//
// `now` is the caller's: the parser receives one instant per request (never reads a clock),
// so tests pin it and every bound of one request agrees.
//
// Errors are 400 `parse_exception` with ES's reasons ("operator not supported for date math
// [...]", "truncated date math [...]", "unit [x] not supported for date math [...]", "rounding
// `/` can only be used on single unit types [...]"); ES itself wraps them in a
// search_phase_execution_exception whose root cause is this parse_exception.
//
// Pure functions, thread-safe, no allocation beyond error messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"

namespace turnpike::search {

// A date as written: ISO-8601 (date, or date-time with optional seconds, fraction and zone)
// or epoch milliseconds (digits, optional '-').
struct DateParts {
  int64_t local_ms = 0;              // the written fields as if they were UTC
  std::optional<int64_t> offset_ms;  // the written zone (Z, +hh:mm); epoch millis: 0
  int64_t round_up_fill = 0;         // ms from the value to the last ms of its missing parts
};
std::optional<DateParts> ParseDateParts(std::string_view text);

// A `time_zone` as a fixed offset in ms: "Z", "UTC", "GMT", "Etc/UTC", "+01:00", "-0530",
// "+05". Anything else is a 400 naming it.
Result<int64_t> ParseTimeZone(std::string_view zone);

// One range bound (a date string or date math) as epoch ms. `now_ms`: the request's instant.
Result<int64_t> ResolveDateBound(std::string_view text, int64_t now_ms, bool round_up,
                                 int64_t offset_ms);

}  // namespace turnpike::search
