// turnpike: one binary, several commands. Each command registers itself; see app/README in
// src/README.md for the composition root's role.
#include <signal.h>

#include <CLI/CLI.hpp>

#include "app/admin_command.h"
#include "app/serve_command.h"
#include "loadgen/bench_command.h"
#include "mock/mock_command.h"

int main(int argc, char** argv) {
  // Sockets use MSG_NOSIGNAL; this covers the access log writing to a closed stdout pipe.
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"Turnpike: a multi-tenant AI gateway"};
  app.require_subcommand(1);
  turnpike::app::RegisterServeCommands(app);
  turnpike::app::RegisterAdminCommand(app);
  turnpike::mock::RegisterMockProviderCommand(app);
  turnpike::loadgen::RegisterBenchCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
