#include "doors/admin/resources.h"

#include <stdexcept>

#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace {
constexpr std::string_view kPrefix = "/admin/";
constexpr std::string_view kLabel = "admin";
}  // namespace

void AdminResources::Add(std::vector<core::AdminRoute> routes) {
  for (core::AdminRoute& route : routes) {
    if (!route.pattern.starts_with(kPrefix) || route.methods.any() || !route.handler) {
      throw std::invalid_argument("an admin route needs a pattern under /admin/, methods and a " +
                                  std::string("handler: ") + route.pattern);
    }
    routes_.push_back(std::move(route));
  }
}

std::vector<core::RouteSpec> AdminResources::Routes() const {
  std::vector<core::RouteSpec> specs;
  specs.reserve(routes_.size() + 1);
  for (size_t i = 0; i < routes_.size(); ++i) {
    specs.push_back(
        {routes_[i].pattern, routes_[i].methods, std::string(kLabel), static_cast<int>(i)});
  }
  specs.push_back(
      {std::string(kPrefix) + "**", {}, std::string(kLabel), static_cast<int>(routes_.size())});
  return specs;
}

const core::AdminRoute* AdminResources::Find(int route) const {
  if (route < 0 || static_cast<size_t>(route) >= routes_.size()) return nullptr;
  return &routes_[static_cast<size_t>(route)];
}

std::shared_ptr<AdminResources> GovernanceResources(control::GovernanceService& service) {
  auto resources = std::make_shared<AdminResources>();
  resources->Add(GovernanceRoutes(service));
  return resources;
}

}  // namespace turnpike::doors::admin
