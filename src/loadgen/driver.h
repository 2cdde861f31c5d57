// Runs one benchmark: resolves the target, starts the worker threads, prints a progress line
// each second, and returns the merged numbers.
//
// Timeline: warm-up (--warmup), then the measured window of --duration seconds, which ends
// early once --requests measured requests have completed. Requests in flight when it ends are
// dropped. Connections are spread round-robin over the worker threads.
//
// Errors: bad options or a target that does not resolve throw std::invalid_argument or
// std::runtime_error before any load is sent. Failures during the run are counted, never
// thrown.
//
// Threads: call from one thread; it blocks until the run is over.
#pragma once

#include <ostream>

#include "loadgen/bench_options.h"
#include "loadgen/run_stats.h"

namespace turnpike::loadgen {

struct BenchResult {
  RunStats stats;         // all threads merged
  double elapsed_s = 0;   // length of the measured window actually used
  double cpu_user_s = 0;  // this process's CPU time during the measured window
  double cpu_system_s = 0;
  double RequestsPerSecond() const;  // completed OK requests per second
};

// Throws std::invalid_argument for options that cannot run (RunBench calls it first).
void ValidateOptions(const BenchOptions& options);

// `progress` receives the progress lines (nullptr: none).
BenchResult RunBench(const BenchOptions& options, std::ostream* progress);

}  // namespace turnpike::loadgen
