// The engines' call-log writers' side of the daily spend counters (daily_spend.h): a counter's
// key as a batch's records spell it (views into the batch, which outlives the write) and what
// a batch adds to it, summed before the one upsert per counter.
//
// Thread safety: plain values (the store thread's, within one write).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

namespace turnpike::store {

struct DayKey {
  std::string_view tenant_id;
  std::string_view key_id;
  std::string_view model;
  int64_t day = 0;  // DayOf(time_ms)
  bool operator==(const DayKey&) const = default;
};

struct DayKeyHash {
  size_t operator()(const DayKey& k) const {
    const std::hash<std::string_view> h;
    return ((h(k.tenant_id) * 1'000'003 ^ h(k.key_id)) * 1'000'003 ^ h(k.model)) * 1'000'003 ^
           static_cast<size_t>(k.day);
  }
};

struct DayCounts {
  int64_t cost_micros = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t requests = 0;

  // One record; a dropped rows' stand-in counts as the requests it stands for.
  void Add(int64_t cost, int64_t prompt, int64_t completion, int64_t dropped_rows) {
    cost_micros += cost;
    prompt_tokens += prompt;
    completion_tokens += completion;
    requests += dropped_rows > 0 ? dropped_rows : 1;
  }
};

}  // namespace turnpike::store
