#include "app/main_command.h"

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "app/admin_command.h"
#include "app/serve_command.h"
#include "doors/agents/agent_door.h"
#include "doors/agents/redis/redis_fleet.h"
#include "doors/webhooks/feature.h"
#include "loadgen/bench_command.h"
#include "mock/mock_command.h"

namespace turnpike::app {
namespace {

// glibc's per-thread cache keeps 7 freed blocks of each size up to 1,032 bytes. A worker with
// tens of requests in flight frees and takes small blocks in larger numbers, so most of them went
// through malloc's bins. When coroutine frames still came from there, a plain request's CPU at
// 50 connections fell 5% with the count raised (docs/BENCHMARKS.md, "Allocations that grow with
// connections"); since the executable's own cache serves the frames (common/small_blocks.h), the
// count still takes about 2% off the worker's instructions there ("Coroutine frames from a
// per-thread cache"): the blocks that cache refuses and the ones it does not see (malloc's other
// callers). What glibc's cache keeps is what a burst had in use, in blocks of at most 1,032
// bytes. glibc reads the count only
// from GLIBC_TUNABLES when a process starts, so the long-running commands execute themselves again,
// once, with it set: not when the environment already names it, nor with
// TURNPIKE_MALLOC_TUNING=off, nor under valgrind (an exec would leave it).
constexpr std::string_view kTcacheCount = "glibc.malloc.tcache_count";
constexpr std::string_view kTcacheCountValue = "=1024";

void ReexecWithAllocatorTunables(int argc, char** argv) {
  if (argc < 2) return;
  const std::string_view command = argv[1];
  if (command != "serve" && command != "mock-provider" && command != "bench") return;
  const auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string_view(value == nullptr ? "" : value);
  };
  if (env("TURNPIKE_MALLOC_TUNING") == "off") return;
  if (env("LD_PRELOAD").find("vgpreload") != std::string_view::npos) return;
  std::string tunables(env("GLIBC_TUNABLES"));
  if (tunables.find(kTcacheCount) != std::string::npos) return;
  if (!tunables.empty()) tunables += ':';
  tunables.append(kTcacheCount).append(kTcacheCountValue);
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Not executed again (no /proc): this process goes on with glibc's defaults.
}

}  // namespace

Features ProductFeatures() {
  // The webhook outbox subscribes to the agents' turn events (doors/webhooks/feature.h).
  auto webhooks = std::make_shared<webhooks::WebhooksShared>();
  return {agents::AgentsFeature(agents::MakeRedisFleet, {webhooks::TurnWebhooks(webhooks)}),
          webhooks::WebhooksFeature(webhooks)};
}

int Main(int argc, char** argv, Features features) {
  ReexecWithAllocatorTunables(argc, argv);
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
