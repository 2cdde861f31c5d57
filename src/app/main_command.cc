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

// Two glibc malloc tunables, which glibc reads only from GLIBC_TUNABLES when a process starts:
// - glibc.malloc.tcache_count=1024. glibc's per-thread cache keeps 7 freed blocks of each size
//   up to 1,032 bytes. A worker with tens of requests in flight frees and takes small blocks in
//   larger numbers, so most of them went through malloc's bins. When coroutine frames still came
//   from there, a plain request's CPU at 50 connections fell 5% with the count raised
//   (docs/BENCHMARKS.md, "Allocations that grow with connections"); since the executable's own
//   cache serves the frames (common/small_blocks.h), the count still takes about 2% off the
//   worker's instructions there ("Coroutine frames from a per-thread cache"): the blocks that
//   cache refuses and the ones it does not see (malloc's other callers). What glibc's cache keeps
//   is what a burst had in use, in blocks of at most 1,032 bytes.
// - glibc.malloc.hugetlb=1: malloc asks for transparent huge pages (madvise) on the memory it
//   takes from the kernel, where the kernel offers them (`transparent_hugepage/enabled` set to
//   `madvise` or `always`; no effect with `never`). A worker's state for 1,000 streams spans
//   thousands of 4 KiB pages, and each stream's turn touches a few of them: with 2 MiB pages the
//   worker's user time per stream fell about 12% there, its total CPU about 2.5%, in one
//   measurement; the side-by-side sets at 1,000 connections did not show it apart from their
//   spread (docs/BENCHMARKS.md, "Profile-guided builds and huge pages for the heap").
// So the long-running commands execute themselves again, once, with the missing ones added: not
// for a tunable the environment already names, not with TURNPIKE_MALLOC_TUNING=off, nor under
// valgrind (an exec would leave it).
constexpr std::string_view kTunables[] = {"glibc.malloc.tcache_count=1024",
                                          "glibc.malloc.hugetlb=1"};

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
  bool added = false;
  for (const std::string_view tunable : kTunables) {
    const std::string_view name = tunable.substr(0, tunable.find('=') + 1);
    if (tunables.find(name) != std::string::npos) continue;
    if (!tunables.empty()) tunables += ':';
    tunables.append(tunable);
    added = true;
  }
  if (!added) return;
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
