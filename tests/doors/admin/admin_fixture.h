// The admin door as a worker runs it: a GovernanceService over the fake engine
// (tests/control/fake_engine.h) seeded with plan "basic", tenant "acme" and one key; the
// governance resources plus one resource "another door" adds through core/admin_route.h;
// the router and a core::Dispatcher; requests as FakeExchanges (tests/http/fake_exchange.h),
// run to their end on a loop of the test's thread.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <memory>
#include <string>
#include <vector>

#include "../../control/fake_engine.h"
#include "../../core/run_on_loop.h"
#include "../../http/fake_exchange.h"
#include "config/config.h"
#include "control/governance_service.h"
#include "core/dispatcher.h"
#include "core/request_probe.h"
#include "core/router.h"
#include "doors/admin/admin_api.h"
#include "doors/admin/resources.h"
#include "governance/local_counters.h"

namespace turnpike::doors::admin::testing {

inline constexpr char kToken[] = "s3cret-admin";
inline constexpr char kKeyId[] = "abcdefghijkl";

// What a request got back.
struct Answered {
  unsigned status = 0;
  boost::json::value body;
  std::string allow;
  std::string retry_after;
  std::string server_timing;
  std::string content_type;

  std::string type() const { return Field("type"); }
  std::string field() const { return Field("field"); }

 private:
  std::string Field(const char* name) const {
    const auto* error = body.is_object() ? body.as_object().if_contains("error") : nullptr;
    const auto* value = error != nullptr ? error->as_object().if_contains(name) : nullptr;
    return value != nullptr && value->is_string() ? std::string(value->as_string()) : "";
  }
};

// A resource of "another door": GET /admin/v1/widgets/{tenant}, its tenant from the path; it
// answers the tenant the admin door resolved for it.
inline boost::asio::awaitable<Result<core::AdminAnswer>> WidgetHandler(
    const core::AdminCall& call) {
  co_return core::AdminAnswer{200, "{\"tenant\":\"" + call.tenant + "\"}"};
}

class AdminDoorTest : public ::testing::Test {
 protected:
  // The door reads the token through a reference: a test may clear token_ (the API off).
  void SetUp() override {
    auto engine = std::make_unique<control::FakeEngine>();
    engine_ = engine.get();
    engine_->fake_records().ChangeBehindTheBack([](store::GovernanceRows& rows) {
      governance::Plan plan;
      plan.id = "basic";
      rows.plans.push_back(plan);
      governance::Tenant tenant;
      tenant.id = "acme";
      tenant.name = "Acme";
      tenant.plan_id = "basic";
      rows.tenants.push_back(tenant);
      governance::Key key;
      key.public_id = kKeyId;
      key.tenant_id = "acme";
      key.secret_hash.fill(7);
      rows.keys.push_back(key);
    });
    store::StoreThreadOptions options;
    options.tick = std::chrono::milliseconds(1);
    // As app/ does: the engine migrated and its thread built before the service borrows them.
    owned_engine_ = std::move(engine);
    ASSERT_TRUE(owned_engine_->Migrate().ok());
    thread_ = std::make_unique<store::StoreThread>(*owned_engine_, options);
    auto started = control::GovernanceService::Start(config_, *owned_engine_, *thread_, counters_);
    ASSERT_TRUE(started.ok()) << started.error().message;
    service_ = std::move(started.value());

    resources_ = GovernanceResources(*service_);
    resources_->Add({{"/admin/v1/widgets/{tenant}",
                      {core::Verb::get},
                      core::TenantFrom::Path("tenant"),
                      WidgetHandler}});
    doors_.push_back(
        {resources_->Routes(), [this](int, boost::asio::io_context&, core::WorkerCore& core) {
           return std::make_unique<AdminApi>(*resources_, token_, sessions_, service_->cell(),
                                             failures_, core);
         }});
    router_.Add(0, doors_[0].routes);
    shared_ = std::make_unique<core::CoreShared>(router_, probes_);
    shared_->server_timing = true;
    shared_->tls = &tls_;
    dispatcher_ = std::make_unique<core::Dispatcher>(*shared_, doors_, 0, io_);
  }

  Answered Call(core::Verb method, std::string_view target, std::string body = {},
                bool with_token = true) {
    const std::string authorization = std::string("Bearer ") + kToken;
    const std::initializer_list<std::pair<std::string_view, std::string_view>> token = {
        {"authorization", authorization}};
    return CallWith(method, target, std::move(body), with_token ? token : decltype(token){});
  }

  // A call with exactly `headers` (no token unless among them).
  Answered CallWith(core::Verb method, std::string_view target, std::string body,
                    std::initializer_list<std::pair<std::string_view, std::string_view>> headers) {
    http::testing::FakeExchange exchange(method, target, std::move(body), headers);
    core::testing::RunOnLoop(dispatcher_->Handle(exchange));
    Answered out;
    out.status = exchange.response_status();
    boost::system::error_code ec;
    out.body = boost::json::parse(exchange.response_body(), ec);
    EXPECT_FALSE(ec) << exchange.response_body();
    out.allow = std::string(exchange.response_header("Allow"));
    out.retry_after = std::string(exchange.response_header("Retry-After"));
    out.server_timing = std::string(exchange.response_header("Server-Timing"));
    out.content_type = exchange.content_type();
    return out;
  }

  // Requests accounted under the admin label with `status`.
  uint64_t Counted(int status) const {
    const core::RequestProbe& probe = *probes_.requests.at(0);
    const auto& labels = router_.labels();
    const size_t slot = std::find(labels.begin(), labels.end(), "admin") - labels.begin();
    return probe.requests(slot, probe.unknown_model_slot(), core::StatusSlot(status));
  }

  governance::LocalCounters counters_;
  config::Config config_ = [] {
    config::Config c;
    c.governance.snapshot_ttl = std::chrono::milliseconds(1);
    c.governance.reconcile_interval = std::chrono::milliseconds(0);
    return c;
  }();
  std::string token_ = kToken;
  ConsoleSessions sessions_{kToken, 3600};
  AuthFailures failures_;
  control::FakeEngine* engine_ = nullptr;  // owned_engine_
  // Borrowed by service_, which stops the thread when it goes (declared first: outlive it).
  std::unique_ptr<control::FakeEngine> owned_engine_;
  std::unique_ptr<store::StoreThread> thread_;
  std::unique_ptr<control::GovernanceService> service_;
  const upstream::TlsContexts tls_{"", false};  // the workers' upstream pools
  std::shared_ptr<AdminResources> resources_;
  std::vector<core::DoorSpec> doors_;
  core::Router router_{0};
  core::ProbeRegistry probes_;
  std::unique_ptr<core::CoreShared> shared_;
  boost::asio::io_context io_;
  std::unique_ptr<core::Dispatcher> dispatcher_;
};

}  // namespace turnpike::doors::admin::testing
