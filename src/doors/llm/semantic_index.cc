#include "doors/llm/semantic_index.h"

#include <algorithm>

#include "common/vectors.h"

namespace turnpike::doors::llm {

SemanticIndex::Namespace* SemanticIndex::Find(std::string_view ns, bool create) {
  std::lock_guard lock(mu_);
  auto it = namespaces_.find(ns);
  if (it != namespaces_.end()) return it->second.get();
  if (!create) return nullptr;
  return namespaces_.emplace(std::string(ns), std::make_unique<Namespace>()).first->second.get();
}

std::optional<SemanticMatch> SemanticIndex::Lookup(std::string_view ns,
                                                   std::span<const float> vector, float threshold,
                                                   int64_t now_ms) {
  Namespace* space = Find(ns, false);
  if (space == nullptr) return std::nullopt;
  std::lock_guard lock(space->mu);
  if (space->dims != vector.size()) return std::nullopt;
  const size_t count = space->slots.size();
  size_t best = count;
  float best_similarity = threshold;
  // Newest first (backwards from the insert point), so a tie keeps the newer entry.
  for (size_t step = 1; step <= count; ++step) {
    const size_t i = (space->next + count - step) % count;
    if (space->slots[i].expires_at_ms <= now_ms) continue;
    const float similarity =
        Dot(space->vectors.data() + i * space->dims, vector.data(), space->dims);
    if (similarity >= best_similarity && (best == count || similarity > best_similarity)) {
      best = i;
      best_similarity = similarity;
    }
  }
  if (best == count) return std::nullopt;
  return SemanticMatch{space->slots[best].entry_id, best_similarity};
}

void SemanticIndex::Insert(std::string_view ns, std::span<const float> vector, std::string entry_id,
                           int64_t expires_at_ms) {
  if (vector.empty() || max_entries_ == 0) return;
  Namespace* space = Find(ns, true);
  std::lock_guard lock(space->mu);
  if (space->dims != vector.size()) {
    space->dims = vector.size();
    space->next = 0;
    space->slots.clear();
    space->vectors.clear();
  }
  const size_t i = space->next;
  if (i == space->slots.size()) {
    space->slots.emplace_back();
    space->vectors.resize(space->vectors.size() + space->dims);
  }
  space->slots[i] = Slot{std::move(entry_id), expires_at_ms};
  std::copy(vector.begin(), vector.end(), space->vectors.begin() + i * space->dims);
  space->next = (i + 1) % max_entries_;
}

void SemanticIndex::Drop(std::string_view ns, std::string_view entry_id) {
  Namespace* space = Find(ns, false);
  if (space == nullptr) return;
  std::lock_guard lock(space->mu);
  for (Slot& slot : space->slots) {
    if (slot.entry_id == entry_id) slot.expires_at_ms = 0;
  }
}

size_t SemanticIndex::Size(std::string_view ns, int64_t now_ms) {
  Namespace* space = Find(ns, false);
  if (space == nullptr) return 0;
  std::lock_guard lock(space->mu);
  size_t live = 0;
  for (const Slot& slot : space->slots) live += slot.expires_at_ms > now_ms ? 1 : 0;
  return live;
}

}  // namespace turnpike::doors::llm
