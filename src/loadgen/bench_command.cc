#include "loadgen/bench_command.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "loadgen/bench_options.h"
#include "loadgen/driver.h"
#include "loadgen/report.h"
#include "loadgen/request_template.h"

namespace turnpike::loadgen {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CLI::ValidationError("--body", "cannot read " + path);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void WriteJson(const std::string& path, const std::string& json) {
  if (path == "-") {
    std::cout << json << std::flush;
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << json;
  if (!out) throw CLI::RuntimeError("cannot write " + path, 1);
}

// Runs the subcommand once CLI11 has filled `options` and `body_file`.
void RunBenchCommand(BenchOptions given, const std::string& body_file) {
  const BenchOptions options = WithBody(std::move(given), body_file);
  BenchResult result;
  try {
    result = RunBench(options, &std::cerr);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(e.what());
  } catch (const std::runtime_error& e) {
    throw CLI::RuntimeError(e.what(), 1);
  }
  std::cerr << FormatSummary(options, result) << std::flush;
  if (!options.json_path.empty()) WriteJson(options.json_path, FormatJson(options, result));
}

}  // namespace

BenchOptions WithBody(BenchOptions options, const std::string& body_file) {
  if (!options.agent.empty() && !body_file.empty()) {
    throw CLI::ValidationError("--body", "an --agent run builds its own turns (see --input)");
  }
  options.body = body_file.empty() ? std::string(kDefaultBody) : ReadFile(body_file);
  return options;
}

void AddBenchOptions(CLI::App& app, BenchOptions& options, std::string& body_file) {
  CLI::App* bench = &app;  // the subcommand
  bench->add_option("--url", options.url, "Target, http://host:port/path")->required();
  bench->add_option("-c,--connections", options.connections, "Concurrent connections")
      ->capture_default_str();
  bench->add_option("-d,--duration", options.duration_s, "Measured seconds")->capture_default_str();
  bench->add_option("--requests", options.max_requests, "Stop after N measured requests");
  bench->add_option("--stream-every", options.stream_every,
                    "Every K-th request streams (\"stream\":false becomes true)");
  bench
      ->add_option("--distinct", options.distinct,
                   "Cycle through N bodies that differ by a \"seed\" member (cache misses)")
      ->check(CLI::Range(1, 1'000'000));
  bench->add_option("--body", body_file, "Request body file (default: small chat request)");
  bench->add_option("-H,--header", options.headers, "Extra header 'Name: value'");
  bench->add_option("--warmup", options.warmup_s, "Seconds of load before measuring")
      ->capture_default_str();
  bench->add_option("--timeout", options.timeout_s, "Per-request timeout, seconds")
      ->capture_default_str();
  bench->add_option("--threads", options.threads, "Event loop threads")->capture_default_str();
  bench->add_option("--json", options.json_path, "Write results as JSON to this file (- = stdout)");
  bench->add_flag("-q,--quiet", options.quiet, "No progress lines");
  bench->add_option("--agent", options.agent,
                    "Agent turns of this agent: a conversation per connection (--url "
                    "http://host:port[/v1/responses]; send the key with -H)");
  bench->add_option("--turns", options.turns, "With --agent: turns per conversation")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  bench->add_option("--input", options.input, "With --agent: each turn's input text");
  bench->add_flag("--http2", options.http2,
                  "HTTP/2 (cleartext, prior knowledge): --streams-per-conn streams on each of "
                  "the -c connections");
  bench
      ->add_option("--streams-per-conn", options.streams_per_connection,
                   "With --http2: concurrent streams per connection")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
}

void RegisterBenchCommand(CLI::App& root) {
  // Option storage lives as long as the subcommand: CLI11 owns it through the callback.
  auto options = std::make_shared<BenchOptions>();
  auto body_file = std::make_shared<std::string>();
  CLI::App* bench = root.add_subcommand("bench", "HTTP load generator (closed loop, keep-alive)");
  AddBenchOptions(*bench, *options, *body_file);
  bench->callback([options, body_file] { RunBenchCommand(*options, *body_file); });
}

}  // namespace turnpike::loadgen
