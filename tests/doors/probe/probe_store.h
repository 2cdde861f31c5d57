// The probe door's store role (store/role.h): one table, probe_answers, with a migration on
// each engine, and its two statement purposes (probe_write, probe_read) counted beside the
// core's. The table keeps each answer the door recorded: the model asked, the answer's text
// (JSON-escaped, as the pivot events carry it) and how many events the recording held.
//
// Threads: a ProbeStore is one engine session's; it is used only by that session's store
// thread (reached in a job with engine.role<ProbeStore>()).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/role.h"

namespace turnpike::probe {

struct ProbeAnswer {
  int64_t id = 0;
  std::string model;
  std::string text;  // JSON-escaped
  int64_t events = 0;
};

class ProbeStore : public store::Role {
 public:
  // The new row's id.
  virtual Result<int64_t> Add(std::string_view model, std::string_view text, int64_t events) = 0;
  // Every row, oldest first.
  virtual Result<std::vector<ProbeAnswer>> List() = 0;
};

// The role as app/ registers it.
store::RoleSpec ProbeRole();

}  // namespace turnpike::probe
