// `turnpike bench`: the HTTP load generator used for docs/BENCHMARKS.md.
//
//   turnpike bench --url http://127.0.0.1:8080/v1/chat/completions -c 50 -d 10
//       [--requests N] [--stream-every K] [--body FILE] [-H 'Name: value']... [--warmup S]
//       [--timeout S] [--threads T] [--json OUT|-] [--quiet]
//
// Closed loop: each of the -c keep-alive connections POSTs the next request when the previous
// response is fully read. Every K-th request (per thread) is a stream: the body's
// `"stream":false` becomes `"stream":true`. Prints a progress line each second and a summary
// to stderr; --json writes every number (see report.h) to a file, or stdout for "-".
//
// Ownership: the subcommand and its option storage are owned by `root` (CLI11 keeps them for
// the app's lifetime). Errors: bad options, an unreadable body file or an unresolvable host
// make the callback throw CLI::ValidationError / CLI::RuntimeError (exit code 1), which the
// caller's usual `app.exit(e)` handling turns into a message and exit status.
#pragma once

#include <CLI/CLI.hpp>

namespace turnpike::loadgen {

void RegisterBenchCommand(CLI::App& root);

}  // namespace turnpike::loadgen
