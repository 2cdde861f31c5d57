#include "providers/reasoning.h"

#include "providers/request_fields.h"

namespace turnpike::providers::reasoning {

int64_t BudgetFor(Effort effort) {
  switch (effort) {
    case Effort::kNone:
      return 0;
    case Effort::kMinimal:
      return kMinimalBudget;
    case Effort::kLow:
      return kLowBudget;
    case Effort::kMedium:
      return kMediumBudget;
    case Effort::kHigh:
      return kHighBudget;
  }
  return 0;
}

Effort EffortFor(int64_t budget) {
  if (budget <= 0) return Effort::kNone;
  if (budget < kLowBelow) return Effort::kLow;
  if (budget < kMediumBelow) return Effort::kMedium;
  return Effort::kHigh;
}

std::string_view EffortName(Effort effort) {
  switch (effort) {
    case Effort::kNone:
      return "none";
    case Effort::kMinimal:
      return "minimal";
    case Effort::kLow:
      return "low";
    case Effort::kMedium:
      return "medium";
    case Effort::kHigh:
      return "high";
  }
  return "none";
}

Result<std::optional<Effort>> ReadEffort(const boost::json::object& chat) {
  if (!request::Present(chat, kEffort)) return std::optional<Effort>{};
  const boost::json::value& value = chat.at(kEffort);
  if (value.is_string()) {
    for (Effort effort :
         {Effort::kNone, Effort::kMinimal, Effort::kLow, Effort::kMedium, Effort::kHigh}) {
      if (value.as_string() == EffortName(effort)) return std::optional<Effort>(effort);
    }
  }
  return request::Invalid(
      "Invalid value for 'reasoning_effort': expected one of 'none', 'minimal', 'low', "
      "'medium', 'high'.",
      std::string(kEffort));
}

Tagged SplitTagged(std::string_view tagged, std::string_view own_dialect) {
  const size_t colon = tagged.find(':');
  if (colon == std::string_view::npos) return {own_dialect, tagged};
  return {tagged.substr(0, colon), tagged.substr(colon + 1)};
}

bool IsGatewayMessageField(std::string_view key) { return key == kSignature || key == kRedacted; }

const boost::json::value* IssuedBy(const boost::json::value& entry, std::string_view dialect) {
  if (!entry.is_object()) return nullptr;
  const boost::json::value* from = entry.as_object().if_contains("dialect");
  const boost::json::value* value = entry.as_object().if_contains("value");
  if (from == nullptr || value == nullptr || !from->is_string() || !value->is_string()) {
    return nullptr;
  }
  return from->as_string() == dialect ? value : nullptr;
}

}  // namespace turnpike::providers::reasoning
