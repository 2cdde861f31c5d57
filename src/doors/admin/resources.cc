#include "doors/admin/resources.h"

#include <boost/beast/http/verb.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <stdexcept>

#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace json = boost::json;
namespace {
constexpr std::string_view kPrefix = "/admin/";
constexpr std::string_view kLabel = "admin";
// The methods an admin route may take.
constexpr core::Verb kVerbs[] = {core::Verb::get, core::Verb::post, core::Verb::put,
                                 core::Verb::patch, core::Verb::delete_};
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

namespace {

json::object RouteJson(const core::AdminRoute& route) {
  using Where = core::TenantFrom::Where;
  json::array methods;
  for (const core::Verb verb : kVerbs) {
    if (route.methods.Has(verb)) methods.emplace_back(boost::beast::http::to_string(verb));
  }
  const core::TenantFrom& t = route.tenant;
  const char* from = t.where == Where::kPath    ? "path"
                     : t.where == Where::kQuery ? "query"
                     : t.where == Where::kBody  ? "body"
                     : t.where == Where::kOwner ? "owner"
                                                : "none";
  json::object tenant{{"from", from}};
  if (t.where != Where::kNone) {
    tenant["name"] = t.name;
    tenant["noun"] = t.noun;
  }
  return {{"pattern", route.pattern}, {"methods", std::move(methods)}, {"tenant", tenant}};
}

Answer ListRoutes(const AdminResources& resources) {
  json::array data;
  for (const core::AdminRoute& route : resources.routes()) data.push_back(RouteJson(route));
  co_return JsonAnswer(200, json::object{{"data", std::move(data)}});
}

}  // namespace

std::shared_ptr<AdminResources> GovernanceResources(control::GovernanceService& service) {
  auto resources = std::make_shared<AdminResources>();
  resources->Add(GovernanceRoutes(service));
  resources->audit = [&service](control::AuditRow row) { service.RecordAudit(std::move(row)); };
  // Every admin route, as the door serves it (those other doors add later included): what a
  // tenant-isolation check walks. The resources own this route, so the reference outlives it.
  const AdminResources& all = *resources;
  resources->Add(
      {{"/admin/v1/routes", {core::Verb::get}, core::TenantFrom::None(), [&all](const AdminCall&) {
          return ListRoutes(all);
        }}});
  return resources;
}

}  // namespace turnpike::doors::admin
