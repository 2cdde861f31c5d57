#include "app/main_command.h"

#include <signal.h>

#include <CLI/CLI.hpp>
#include <utility>

#include "app/admin_command.h"
#include "app/serve_command.h"
#include "doors/agents/agent_door.h"
#include "doors/agents/redis/redis_fleet.h"
#include "loadgen/bench_command.h"
#include "mock/mock_command.h"

namespace turnpike::app {

Features ProductFeatures() { return {agents::AgentsFeature(agents::MakeRedisFleet)}; }

int Main(int argc, char** argv, Features features) {
  // Sockets use MSG_NOSIGNAL; this covers the access log writing to a closed stdout pipe.
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"Turnpike: a multi-tenant AI gateway"};
  app.require_subcommand(1);
  RegisterServeCommands(app, std::move(features));
  RegisterAdminCommand(app);
  mock::RegisterMockProviderCommand(app);
  loadgen::RegisterBenchCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}

}  // namespace turnpike::app
