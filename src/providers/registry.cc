#include "providers/registry.h"

namespace turnpike::providers {

bool Registry::Add(std::unique_ptr<Provider> provider) {
  if (Find(provider->name()) != nullptr) return false;
  providers_.push_back(std::move(provider));
  return true;
}

const Provider* Registry::Find(std::string_view name) const {
  for (const auto& provider : providers_) {
    if (provider->name() == name) return provider.get();
  }
  return nullptr;
}

std::string Registry::Names() const {
  std::string names;
  for (const auto& provider : providers_) {
    if (!provider->serves_upstream()) continue;
    if (!names.empty()) names += ", ";
    names += provider->name();
  }
  return names;
}

}  // namespace turnpike::providers
