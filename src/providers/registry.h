// The dialects a gateway knows, by name: filled once in the composition root, one line per
// dialect, then read-only.
//
//   providers::Registry registry;
//   registry.Add(std::make_unique<providers::openai::OpenAiProvider>());
//   registry.Add(std::make_unique<providers::anthropic::AnthropicProvider>());
//   const providers::Provider* upstream = registry.Find(deployment.provider);
//
// Ownership: owns its providers; pointers from Find live as long as the registry. Thread
// safety: Add only before sharing; Find is safe from any thread afterwards. Errors: Add
// returns false (and keeps the first) when a dialect with the same name is already there.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "providers/provider.h"

namespace turnpike::providers {

class Registry {
 public:
  bool Add(std::unique_ptr<Provider> provider);

  // nullptr when no dialect has that name.
  const Provider* Find(std::string_view name) const;

  // The names of the dialects that serve upstream (a deployment's `provider`), in the order
  // added, comma-separated (for error messages).
  std::string Names() const;

 private:
  std::vector<std::unique_ptr<Provider>> providers_;  // a handful: a linear search is fastest
};

}  // namespace turnpike::providers
