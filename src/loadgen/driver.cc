#include "loadgen/driver.h"

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "loadgen/agent_template.h"
#include "loadgen/request_template.h"
#include "loadgen/worker.h"

namespace turnpike::loadgen {
namespace {

constexpr auto kProgressInterval = std::chrono::seconds(1);
constexpr size_t kProgressLineMax = 160;

struct CpuTime {
  double user_s = 0;
  double system_s = 0;
};

CpuTime ProcessCpuTime() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

Clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// An agent-turn run's requests (agent_template.h).
AgentPlan MakeAgentPlan(const BenchOptions& options, const Target& target) {
  const AgentPaths paths = AgentPathsOf(target.path);
  AgentPlan agent;
  Target conversations = target;
  conversations.path = paths.conversations;
  agent.create_request = BuildRequest(conversations, "{}", options.headers);
  agent.turn_target = target;
  agent.turn_target.path = paths.responses;
  agent.agent = options.agent;
  agent.input = options.input.empty() ? std::string(kDefaultTurnInput) : options.input;
  agent.headers = options.headers;
  agent.turns = options.turns;
  // Fail at start-up, not on the first conversation, if a turn's request cannot be built.
  const std::string body = TurnBody(agent.agent, "conv_check", agent.input);
  BuildRequest(agent.turn_target, StreamingBody(body), agent.headers);
  return agent;
}

// An --http2 run's bodies and headers, apart (h2_stream_loop.h).
Http2Plan MakeHttp2Plan(const BenchOptions& options, const Target& target) {
  Http2Plan h2;
  Result<upstream::Origin> origin =
      upstream::ParseOrigin("http://" + target.host + ":" + target.port, false);
  if (!origin.ok()) throw std::invalid_argument(origin.error().message);
  h2.origin = std::move(origin.value());
  h2.origin.http2 = true;
  h2.path = target.path;
  for (int i = 0; i < std::max(options.distinct, 1); ++i) {
    const std::string body = options.distinct > 1 ? DistinctBody(options.body, i) : options.body;
    h2.plain_bodies.push_back(body);
    if (options.stream_every > 0) h2.stream_bodies.push_back(StreamingBody(body));
  }
  for (const std::string& header : options.headers) {
    const size_t colon = header.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("bad header: " + header);
    std::string_view value = std::string_view(header).substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (header.compare(0, colon, "Content-Type") == 0 ||
        header.compare(0, colon, "content-type") == 0) {
      h2.content_type = std::string(value);
      continue;
    }
    if (!h2.extra_headers.empty()) h2.extra_headers += "\r\n";
    h2.extra_headers += header;
  }
  h2.streams_per_connection = options.streams_per_connection;
  return h2;
}

}  // namespace

void ValidateOptions(const BenchOptions& o) {
  if (o.connections < 1) throw std::invalid_argument("-c must be at least 1");
  if (o.threads < 1) throw std::invalid_argument("--threads must be at least 1");
  if (o.duration_s <= 0) throw std::invalid_argument("-d must be positive");
  if (o.warmup_s < 0) throw std::invalid_argument("--warmup cannot be negative");
  if (o.timeout_s <= 0) throw std::invalid_argument("--timeout must be positive");
  if (o.stream_every < 0) throw std::invalid_argument("--stream-every cannot be negative");
  if (o.turns < 1) throw std::invalid_argument("--turns must be at least 1");
  if (o.http2 && !o.agent.empty()) {
    throw std::invalid_argument("--http2 does not apply to --agent runs");
  }
  if (o.streams_per_connection < 1) {
    throw std::invalid_argument("--streams-per-conn must be at least 1");
  }
  if (!o.agent.empty() && o.distinct > 1) {
    throw std::invalid_argument("--distinct does not apply to --agent (each turn is new)");
  }
}

namespace {

Plan MakePlan(const BenchOptions& options) {
  const Target target = ParseUrl(options.url);
  Plan plan;
  boost::asio::io_context io;
  boost::asio::ip::tcp::resolver resolver(io);
  boost::system::error_code ec;
  for (const auto& entry : resolver.resolve(target.host, target.port, ec)) {
    plan.endpoints.push_back(entry.endpoint());
  }
  if (ec || plan.endpoints.empty()) {
    throw std::runtime_error("cannot resolve " + target.host + ": " + ec.message());
  }
  if (!options.agent.empty()) {
    plan.agent = MakeAgentPlan(options, target);
    plan.plain_requests.push_back(plan.agent->create_request);  // unused: keeps one variant
  }
  for (int i = 0; i < std::max(options.distinct, 1) && !plan.agent; ++i) {
    const std::string body = options.distinct > 1 ? DistinctBody(options.body, i) : options.body;
    plan.plain_requests.push_back(BuildRequest(target, body, options.headers));
    if (options.stream_every > 0) {
      plan.stream_requests.push_back(BuildRequest(target, StreamingBody(body), options.headers));
    }
  }
  if (options.http2) plan.http2 = MakeHttp2Plan(options, target);
  plan.stream_every = options.stream_every;
  plan.timeout = Seconds(options.timeout_s);
  plan.max_requests = options.max_requests;
  return plan;
}

// Wakes the driver thread when a worker thread finishes.
struct DoneSignal {
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
};

void RunWorker(Worker& worker, DoneSignal& done) {
  worker.Run();
  const std::lock_guard lock(done.mu);
  --done.running;
  done.cv.notify_all();
}

void PrintProgress(std::ostream& out, double at_s, bool warming_up, uint64_t ok, uint64_t ok_delta,
                   double interval_s, uint64_t failed) {
  char line[kProgressLineMax];
  if (warming_up) {
    std::snprintf(line, sizeof line, "[%6.1fs] warming up\n", at_s);
  } else {
    std::snprintf(line, sizeof line, "[%6.1fs] %10.0f req/s  ok %llu  failed %llu\n", at_s,
                  interval_s > 0 ? static_cast<double>(ok_delta) / interval_s : 0.0,
                  static_cast<unsigned long long>(ok), static_cast<unsigned long long>(failed));
  }
  out << line << std::flush;
}

}  // namespace

double BenchResult::RequestsPerSecond() const {
  return elapsed_s > 0 ? static_cast<double>(stats.ok()) / elapsed_s : 0.0;
}

BenchResult RunBench(const BenchOptions& options, std::ostream* progress) {
  ValidateOptions(options);
  Plan plan = MakePlan(options);
  const Clock::time_point start = Clock::now();
  plan.measure_start = start + Seconds(options.warmup_s);
  plan.end = plan.measure_start + Seconds(options.duration_s);

  std::atomic<uint64_t> tickets{0};
  std::vector<std::unique_ptr<Worker>> workers;
  const int threads = std::min(options.threads, options.connections);
  for (int t = 0; t < threads; ++t) {
    const int share = options.connections / threads + (t < options.connections % threads ? 1 : 0);
    workers.push_back(std::make_unique<Worker>(plan, tickets, share));
  }
  DoneSignal done;
  done.running = threads;
  std::vector<std::thread> pool;
  for (auto& worker : workers) pool.emplace_back(RunWorker, std::ref(*worker), std::ref(done));

  // Sample CPU time when the measured window opens; print progress each second meanwhile.
  std::optional<CpuTime> cpu_at_start;
  uint64_t last_ok = 0;
  Clock::time_point last_tick = start;
  for (Clock::time_point next_tick = start + kProgressInterval;; next_tick += kProgressInterval) {
    const Clock::time_point wake =
        cpu_at_start ? next_tick : std::min(next_tick, plan.measure_start);
    std::unique_lock lock(done.mu);
    if (done.cv.wait_until(lock, wake, [&] { return done.running == 0; })) break;
    lock.unlock();
    const Clock::time_point now = Clock::now();
    if (!cpu_at_start && now >= plan.measure_start) cpu_at_start = ProcessCpuTime();
    if (now < next_tick) {
      next_tick -= kProgressInterval;  // woke for the CPU sample, not for a tick
      continue;
    }
    uint64_t ok = 0;
    uint64_t failed = 0;
    for (const auto& worker : workers) {
      ok += worker->ok_so_far();
      failed += worker->failed_so_far();
    }
    const double interval_s = std::chrono::duration<double>(now - last_tick).count();
    if (progress && !options.quiet) {
      PrintProgress(*progress, std::chrono::duration<double>(now - start).count(),
                    now < plan.measure_start, ok, ok - last_ok, interval_s, failed);
    }
    last_ok = ok;
    last_tick = now;
  }
  for (auto& thread : pool) thread.join();
  const CpuTime cpu_at_end = ProcessCpuTime();

  BenchResult result;
  bool all_ended_early = true;
  Clock::time_point last_done = plan.measure_start;
  for (const auto& worker : workers) {
    result.stats.Merge(worker->stats());
    all_ended_early = all_ended_early && worker->ended_early();
    last_done = std::max(last_done, worker->last_done_at());
  }
  const Clock::time_point window_end = all_ended_early ? std::min(last_done, plan.end) : plan.end;
  result.elapsed_s = std::chrono::duration<double>(window_end - plan.measure_start).count();
  const CpuTime base = cpu_at_start.value_or(CpuTime{});
  result.cpu_user_s = cpu_at_end.user_s - base.user_s;
  result.cpu_system_s = cpu_at_end.system_s - base.system_s;
  return result;
}

}  // namespace turnpike::loadgen
