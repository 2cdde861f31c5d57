// The built-in price table: list prices of widely used models, in the units of cost.h
// (micro-USD per million tokens), as the providers published them on kDefaultPricesDate.
//
// It is a starting point, not a source of truth: prices change, and contracts differ from list
// prices. Config (`prices:`) overrides entries by model name, and the admin API
// (PUT /admin/v1/prices/{model}) overrides both; `GET /admin/v1/prices` shows which source
// each effective price came from. A model in none of them is metered in tokens and flagged
// unpriced (cost.h), never silently free.
//
// Thread safety: immutable static data.
#pragma once

#include <span>
#include <string_view>

#include "governance/cost.h"

namespace turnpike::governance {

inline constexpr std::string_view kDefaultPricesDate = "2025-08-01";

struct DefaultPrice {
  std::string_view model;
  ModelPrice price;
};

std::span<const DefaultPrice> DefaultPrices();

}  // namespace turnpike::governance
