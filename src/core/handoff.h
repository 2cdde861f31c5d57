// Hand-off between doors: a door that received a request passes it to another door after
// reading what decides it, without parsing the body twice and without naming that door. The
// LLM door reads `model` of a POST /v1/responses; a model named with a prefix another door
// declared (the agent door's "agent:") belongs to that door.
//
//   app/:             each DoorSpec lists its model-name prefixes (door.h); app/ builds one
//                     HandOffTable from them, in CoreShared
//   the first door:   reads the deciding field once; when WorkerCore::HandOffTarget(key) names
//                     a door, it calls that door's Receive with the parsed body and returns
//   the second door:  Receive answers the exchange as its own Handle would (Start, its chain,
//                     Respond, Finish); the first door has not started a context for it
//
// The router stays a pure method + path lookup: a hand-off is decided by the body, after it.
// A table with no prefixes costs the first door nothing (it checks empty() before reading).
//
// Ownership and threads: the table is built once at start-up and read-only after (any
// thread); a HandedRequest belongs to the receiving door's coroutine.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace turnpike::core {

// What the receiving door gets: the key that chose it and the body as the first door parsed it
// (a JSON document; the receiver owns it now).
struct HandedRequest {
  std::string key;
  boost::json::value document;
};

class HandOffTable {
 public:
  // Throws std::invalid_argument on an empty prefix or one another door declared (start-up).
  void Add(std::string prefix, uint16_t door);
  bool empty() const { return prefixes_.empty(); }
  // The door whose prefix begins `key` (the longest such prefix); -1 when none does.
  int Find(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, uint16_t>> prefixes_;  // longest first
};

}  // namespace turnpike::core
