#include "store/postgres/engine.h"

#include "store/postgres/migrations.h"
#include "store/postgres/sql_session.h"

namespace turnpike::store::postgres {
namespace {

ConnectionOptions ConnectionFor(const std::string& url, const EngineOptions& options,
                                bool pipeline) {
  ConnectionOptions c;
  c.url = url;
  c.timeout = options.timeout;
  c.pipeline = pipeline;
  return c;
}

}  // namespace

PostgresEngine::PostgresEngine(const EngineOptions& options)
    : counts_(std::make_unique<StatementCounts>()),
      db_(ConnectionFor(options.url, options, /*pipeline=*/options.notify_url.empty()),
          counts_.get()),
      listen_(ConnectionFor(options.notify_url.empty() ? options.url : options.notify_url, options,
                            false),
              counts_.get()),
      spool_(options.spool_path, options.spool_max_bytes),
      records_(db_, listen_),
      call_log_(db_, spool_) {
  const bool pipeline = options.notify_url.empty();
  for (int i = 1; i < options.pool; ++i) {
    sessions_.push_back(std::make_unique<Session>(ConnectionFor(options.url, options, pipeline),
                                                  *counts_, listen_, spool_));
  }
}

Engine& PostgresEngine::session(size_t i) {
  if (i == 0 || i > sessions_.size()) return *this;
  return *sessions_[i - 1];
}

Result<std::unique_ptr<PostgresEngine>> OpenEngine(const EngineOptions& options) {
  std::unique_ptr<PostgresEngine> engine(new PostgresEngine(options));
  std::vector<Connection*> connections = {&engine->db_, &engine->listen_};
  for (auto& session : engine->sessions_) connections.push_back(&session->connection());
  for (Connection* c : connections) {
    Status connected = c->Ensure();
    if (!connected.ok()) {
      return Error{ErrorCode::kUnavailable,
                   "cannot reach PostgreSQL at " + Redacted(c->options().url) + " (" +
                       connected.error().message + ")",
                   ""};
    }
  }
  return engine;
}

Status PostgresEngine::Migrate() {
  Status migrated = postgres::Migrate(db_);
  if (!migrated.ok()) return migrated;
  for (const RoleSchema& role : roles_) {
    Status done = MigrateRole(db_, role.name, role.postgres.migrations,
                              static_cast<int>(role.postgres.migrations.size()));
    if (!done.ok()) return done;
  }
  // Rows a previous run spooled and never sent (it stopped or crashed while the server was
  // down): sent now, before anything new.
  Status replayed = call_log_.ReplaySpool();
  if (!replayed.ok() && replayed.error().code != ErrorCode::kUnavailable) return replayed;
  return Ok{};
}

int PostgresEngine::SchemaVersion() {
  Result<int> version = postgres::SchemaVersion(db_);
  return version.ok() ? version.value() : 0;
}

int PostgresEngine::RoleVersion(std::string_view role) {
  Result<int> version = postgres::RoleVersion(db_, role);
  return version.ok() ? version.value() : 0;
}

Status PostgresEngine::AddRole(const RoleSpec& spec) {
  Result<std::vector<StoreOp>> ops = CheckRole(spec, spec.schema.postgres, roles_, *counts_);
  if (!ops.ok()) return ops.error();
  roles_.push_back(spec.schema);
  if (spec.postgres) {
    AdoptRole(spec.postgres(db_, ops.value()));
    for (auto& session : sessions_) {
      session->Adopt(spec.postgres(session->connection(), ops.value()));
    }
  }
  if (spec.portable) {
    AdoptRole(spec.portable(MakeSqlSession(db_), ops.value()));
    for (auto& session : sessions_) {
      session->Adopt(spec.portable(MakeSqlSession(session->connection()), ops.value()));
    }
  }
  return Ok{};
}

void PostgresEngine::Tick() {
  if (!spool_.empty()) (void)call_log_.ReplaySpool();
}

}  // namespace turnpike::store::postgres

namespace turnpike::store::postgres {

void PostgresEngine::RenderMetrics(observability::PrometheusWriter& w) const {
  using observability::MetricType;
  w.Family("turnpike_store_spooled_rows",
           "Call-log rows kept in the local spool while PostgreSQL is unreachable.",
           MetricType::kGauge);
  w.Sample("turnpike_store_spooled_rows", {}, static_cast<double>(spool_.rows()));
  w.Family("turnpike_store_spool_lost_rows_total",
           "Spooled call-log rows PostgreSQL refused on replay (lost).", MetricType::kCounter);
  w.Sample("turnpike_store_spool_lost_rows_total", {}, static_cast<double>(spool_.lost_rows()));
}

}  // namespace turnpike::store::postgres
