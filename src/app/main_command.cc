#include "app/main_command.h"

#include <malloc.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <utility>

#include "app/admin_command.h"
#include "app/serve_command.h"
#include "doors/agents/agent_door.h"
#include "doors/agents/redis/redis_fleet.h"
#include "doors/webhooks/feature.h"
#include "loadgen/bench_command.h"
#include "mock/mock_command.h"

namespace turnpike::app {

Features ProductFeatures() {
  // The webhook outbox subscribes to the agents' turn events (doors/webhooks/feature.h).
  auto webhooks = std::make_shared<webhooks::WebhooksShared>();
  return {agents::AgentsFeature(agents::MakeRedisFleet, {webhooks::TurnWebhooks(webhooks)}),
          webhooks::WebhooksFeature(webhooks)};
}

int Main(int argc, char** argv, Features features) {
  // Sockets use MSG_NOSIGNAL; this covers the access log writing to a closed stdout pipe.
  signal(SIGPIPE, SIG_IGN);
  // The allocator keeps what a busy thread frees. By default glibc hands an arena's free top
  // back to the kernel (madvise) whenever it passes 128 KiB, and maps and unmaps each block from
  // 128 KiB up: every give-back flushes the TLB of each CPU running one of our threads, and the
  // next allocation faults the pages in again. The store thread paid that on most agent-turn
  // transactions, about 1.4 ms of the process's CPU per turn (docs/BENCHMARKS.md, "Agent turns:
  // the allocator's give-back"). Fixed thresholds: blocks under 8 MiB come from the arenas, and
  // an arena returns its top only past 64 MiB. Setting them turns off glibc's own adjustment.
  mallopt(M_MMAP_THRESHOLD, 8 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
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
