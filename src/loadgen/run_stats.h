// What one load generator thread measured, and the sum of all threads.
//
// Only requests sent inside the measured window are recorded (warm-up and requests still in
// flight when the window closes are not). Latency runs from just before the request is written
// to the read that completes the response; time to first token runs from the same start to the
// read that completes the first SSE `data:` line (an agent turn's: the first
// `event: response.output_text.delta` line, since its response.created precedes the model call).
//
// Threads: a value owned by one worker thread while it runs; merged after the threads join.
#pragma once

#include <array>
#include <cstdint>
#include <map>

#include "loadgen/histogram.h"
#include "loadgen/outcome.h"

namespace turnpike::loadgen {

struct RunStats {
  Histogram latency;  // every kOk request, streaming or not, in nanoseconds
  Histogram ttft;     // every kOk stream that sent a `data:` line, in nanoseconds
  std::array<uint64_t, kOutcomeCount> outcomes{};  // indexed by Outcome
  std::map<int, uint64_t> statuses;                // kHttpStatus failures by status code
  uint64_t streams_ok = 0;
  uint64_t body_bytes = 0;     // decoded body bytes of every recorded response
  uint64_t conversations = 0;  // agent-turn runs: conversations created for measured turns

  uint64_t ok() const { return outcomes[static_cast<int>(Outcome::kOk)]; }
  uint64_t failed() const;
  uint64_t count(Outcome outcome) const { return outcomes[static_cast<int>(outcome)]; }

  void Merge(const RunStats& other);
};

}  // namespace turnpike::loadgen
