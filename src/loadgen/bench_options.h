// The settings of one `turnpike bench` run, as given on the command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace turnpike::loadgen {

struct BenchOptions {
  std::string url;                   // http://host:port/path
  int connections = 10;              // -c: concurrent keep-alive connections (closed loops)
  double duration_s = 10;            // -d: length of the measured window
  uint64_t max_requests = 0;         // --requests: stop after this many; 0 = no limit
  int stream_every = 0;              // --stream-every K: every K-th request streams; 0 = none
  std::string body;                  // request body (the file's content, or the default)
  std::vector<std::string> headers;  // -H "Name: value", added to every request
  double warmup_s = 0;               // --warmup: seconds of load before measuring
  double timeout_s = 30;             // --timeout: connect, or send until fully read
  int threads = 1;                   // --threads: event loop threads
  std::string json_path;             // --json: where to write the results; "-" = stdout
  bool quiet = false;                // --quiet: no progress lines
  int distinct = 1;  // --distinct N: cycle through N bodies, each with "seed":i added first
  // An agent-turn run (agent_template.h): turns of agent `agent`, --turns per conversation,
  // each with `input`. Empty `agent`: a plain run of `body`.
  std::string agent;  // --agent ID
  int turns = 10;     // --turns N
  std::string input;  // --input TEXT (default kDefaultTurnInput)
  // --http2: cleartext HTTP/2 by prior knowledge, --streams-per-conn concurrent streams on each
  // of the -c connections (h2_stream_loop.h).
  bool http2 = false;
  int streams_per_connection = 10;  // --streams-per-conn
};

}  // namespace turnpike::loadgen
