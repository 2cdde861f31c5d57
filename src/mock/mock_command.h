// `turnpike mock-provider`: serves the mock provider (mock_service.h) until SIGINT/SIGTERM.
//
//   turnpike mock-provider [--listen 127.0.0.1:9000] [--workers 1] [--tokens 16]
//       [--first-token-delay 50ms] [--inter-token 0] [--slow-headers 0]
//       [--fail-rate P] [--rate-limit-rate P] [--retry-after S] [--reset-rate P] [--seed N]
//
// Once bound it prints `mock-provider listening on HOST:PORT` to stdout (flushed; with port 0
// this tells the real port). The first SIGINT/SIGTERM drains (in-flight replies finish, up to
// the server's drain timeout) and the callback returns normally (exit status 0); a second one
// stops at once.
//
// Ownership: the subcommand and its option storage are owned by `root` for the app's lifetime.
// Errors: invalid options or an address in use make the callback throw CLI::ValidationError /
// CLI::RuntimeError, which the caller's usual `app.exit(e)` handling reports.
// Threads: the callback blocks SIGINT/SIGTERM in the calling thread (so in the workers it
// starts) and waits for them on a thread of its own; call it from the main thread.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>

#include "mock/mock_options.h"

namespace turnpike::mock {

void RegisterMockProviderCommand(CLI::App& root);

// The command's body, for callers that already hold options: serves until a signal.
// Throws CLI::RuntimeError if the address cannot be bound.
void ServeMockProvider(const MockOptions& options, std::ostream& out);

}  // namespace turnpike::mock
