// `turnpike bench`: the HTTP load generator used for docs/BENCHMARKS.md.
//
//   turnpike bench --url http://127.0.0.1:8080/v1/chat/completions -c 50 -d 10
//       [--requests N] [--stream-every K] [--body FILE] [-H 'Name: value']... [--warmup S]
//       [--timeout S] [--threads T] [--json OUT|-] [--quiet]
//   turnpike bench --url http://127.0.0.1:8080 --agent ID [--turns N] [--input TEXT]
//       -H 'Authorization: Bearer <key>' [the options above but --body and --distinct]
//
// Closed loop: each of the -c keep-alive connections POSTs the next request when the previous
// response is fully read. Every K-th request (per thread) is a stream: the body's
// `"stream":false` becomes `"stream":true`. Prints a progress line each second and a summary
// to stderr; --json writes every number (see report.h) to a file, or stdout for "-".
//
// With --agent, a run of agent turns (agent_connection.h): each connection creates a
// conversation (POST /v1/conversations beside --url's /v1/responses), sends --turns turns on
// it one after another (POST /v1/responses {"model":"agent:ID","conversation":...}), then
// creates the next. A streamed turn succeeds on `event: response.completed`; a 409 (the
// conversation busy) is a failure. The report adds conversations and turns per conversation.
//
// Ownership: the subcommand and its option storage are owned by `root` (CLI11 keeps them for
// the app's lifetime). Errors: bad options, an unreadable body file or an unresolvable host
// make the callback throw CLI::ValidationError / CLI::RuntimeError (exit code 1), which the
// caller's usual `app.exit(e)` handling turns into a message and exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "loadgen/bench_options.h"

namespace turnpike::loadgen {

void RegisterBenchCommand(CLI::App& root);

// The subcommand's options, bound to `options` and `body_file` (which must outlive `bench`).
void AddBenchOptions(CLI::App& bench, BenchOptions& options, std::string& body_file);

// `options` with its body: `body_file`'s content, else the default. Throws
// CLI::ValidationError for an unreadable file or --body with --agent.
BenchOptions WithBody(BenchOptions options, const std::string& body_file);

}  // namespace turnpike::loadgen
