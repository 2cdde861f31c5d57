// Both engines agree on every store role's logical schema (store/role.h): an empty database is
// migrated on SQLite and on a real PostgreSQL 15, and each role's tables and views (what it
// added) are compared column by column, with types normalised to a small logical set; the
// tables a role declares private to one engine are skipped. The core role is checked here; a
// feature role adds its RoleSchema to kRoles. Then the feature-role mechanism on PostgreSQL:
// versions per role, an object per session, purposes counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster.h"
#include "control/security_store.h"
#include "doors/agents/agent_store.h"
#include "doors/webhooks/webhook_store.h"
#include "store/postgres/engine.h"
#include "store/postgres/migrations.h"
#include "store/sqlite/engine.h"
#include "store/sqlite/migrations.h"

namespace turnpike::store {
namespace {

// Table or view -> column -> logical type.
using Schema = std::map<std::string, std::map<std::string, std::string>>;

// integer, real, text, bytes, array, or the declared type itself when it is none of those.
std::string LogicalType(std::string declared) {
  std::transform(declared.begin(), declared.end(), declared.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto has = [&declared](std::string_view part) {
    return declared.find(part) != std::string::npos;
  };
  if (has("array") || has("[]")) return "array";
  if (has("int") || has("serial")) return "integer";
  if (has("char") || has("text") || has("clob")) return "text";
  if (has("blob") || has("bytea")) return "bytes";
  if (has("real") || has("floa") || has("doub") || has("numeric")) return "real";
  return declared;
}

Schema SqliteSchema(sqlite::Database& db) {
  Schema out;
  auto tables = db.Prepare(
      "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE "
      "'sqlite_%'",
      StoreOp::kAdminRead);
  EXPECT_TRUE(tables.ok());
  std::vector<std::string> names;
  for (auto row = tables->Step(); row.ok() && row.value(); row = tables->Step()) {
    names.push_back(tables->Text(0));
  }
  for (const std::string& name : names) {
    auto columns = db.Prepare("SELECT name, type FROM pragma_table_info(?)", StoreOp::kAdminRead);
    EXPECT_TRUE(columns.ok());
    columns->Bind(1, name);
    auto& table = out[name];
    for (auto row = columns->Step(); row.ok() && row.value(); row = columns->Step()) {
      table[columns->Text(0)] = LogicalType(columns->Text(1));
    }
  }
  return out;
}

Schema PostgresSchema(postgres::Connection& db) {
  Schema out;
  auto rows = db.Run(
      "SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c JOIN "
      "information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = "
      "c.table_name WHERE c.table_schema = current_schema() AND t.table_type IN ('BASE TABLE', "
      "'VIEW')",
      postgres::Params{}, StoreOp::kAdminRead);
  EXPECT_TRUE(rows.ok()) << (rows.ok() ? "" : rows.error().message);
  if (!rows.ok()) return out;
  for (int i = 0; i < rows->size(); ++i) {
    out[rows->Text(i, 0)][rows->Text(i, 1)] = LogicalType(rows->Text(i, 2));
  }
  return out;
}

// What `after` has that `before` did not (a role's tables), less bookkeeping and `skip`.
Schema Added(const Schema& before, const Schema& after, std::span<const std::string_view> skip) {
  Schema out;
  for (const auto& [name, columns] : after) {
    if (name == "schema_migrations" || before.count(name) > 0) continue;
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    out[name] = columns;
  }
  return out;
}

// Every way the two differ, one line each; empty when they agree.
std::vector<std::string> Differences(const Schema& sqlite, const Schema& postgres) {
  std::vector<std::string> out;
  std::set<std::string> tables;
  for (const auto& [name, columns] : sqlite) tables.insert(name);
  for (const auto& [name, columns] : postgres) tables.insert(name);
  for (const std::string& table : tables) {
    const auto s = sqlite.find(table);
    const auto p = postgres.find(table);
    if (s == sqlite.end() || p == postgres.end()) {
      out.push_back(table + ": only on " + (s == sqlite.end() ? "postgres" : "sqlite"));
      continue;
    }
    std::set<std::string> columns;
    for (const auto& [name, type] : s->second) columns.insert(name);
    for (const auto& [name, type] : p->second) columns.insert(name);
    for (const std::string& column : columns) {
      const auto sc = s->second.find(column);
      const auto pc = p->second.find(column);
      if (sc == s->second.end() || pc == p->second.end()) {
        out.push_back(table + "." + column + ": only on " +
                      (sc == s->second.end() ? "postgres" : "sqlite"));
      } else if (sc->second != pc->second) {
        out.push_back(table + "." + column + ": " + sc->second + " on sqlite, " + pc->second +
                      " on postgres");
      }
    }
  }
  return out;
}

class SchemaParityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = postgres::Cluster::Get();
    if (cluster_ == nullptr) GTEST_SKIP() << "PostgreSQL 15 binaries absent";
    dir_ = std::filesystem::temp_directory_path() /
           ("turnpike-parity-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    db_ = cluster_->Fresh();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<sqlite::SqliteEngine> Sqlite(const std::vector<RoleSpec>& roles) {
    auto opened = sqlite::OpenEngine((dir_ / "t.db").string(), {});
    EXPECT_TRUE(opened.ok());
    for (const RoleSpec& role : roles) EXPECT_TRUE(opened.value()->AddRole(role).ok());
    return std::move(opened.value());
  }
  std::unique_ptr<postgres::PostgresEngine> Postgres(const std::vector<RoleSpec>& roles,
                                                     int pool = 1) {
    postgres::EngineOptions o;
    o.url = cluster_->Url(db_);
    o.pool = pool;
    o.spool_path = (dir_ / "spool").string();
    o.timeout = std::chrono::milliseconds(2'000);
    auto opened = postgres::OpenEngine(o);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    for (const RoleSpec& role : roles) EXPECT_TRUE(opened.value()->AddRole(role).ok());
    return std::move(opened.value());
  }

  // The differences between the engines in what `role` adds after the roles before it.
  std::vector<std::string> Compare(const RoleSchema& role, const std::vector<RoleSpec>& before) {
    auto lite = Sqlite(before);
    EXPECT_TRUE(lite->Migrate().ok());
    const Schema lite_before = SqliteSchema(lite->database());
    EXPECT_TRUE(sqlite::MigrateRole(lite->database(), role.name, role.sqlite.migrations,
                                    static_cast<int>(role.sqlite.migrations.size()))
                    .ok());
    const Schema lite_after = SqliteSchema(lite->database());
    auto pg = Postgres(before);
    EXPECT_TRUE(pg->Migrate().ok());
    const Schema pg_before = PostgresSchema(pg->connection());
    EXPECT_TRUE(postgres::MigrateRole(pg->connection(), role.name, role.postgres.migrations,
                                      static_cast<int>(role.postgres.migrations.size()))
                    .ok());
    const Schema pg_after = PostgresSchema(pg->connection());
    return Differences(Added(lite_before, lite_after, role.sqlite.private_tables),
                       Added(pg_before, pg_after, role.postgres.private_tables));
  }

  postgres::Cluster* cluster_ = nullptr;
  std::filesystem::path dir_;
  std::string db_;
};

// The core role from an empty database: the records, spend and the call log (its `call_log`
// view as the admin API reads it, migration 8's columns included) agree.
TEST_F(SchemaParityTest, TheCoreRoleAgreesOnBothEngines) {
  const RoleSchema core{"core", sqlite::CoreSchema(), postgres::CoreSchema(), {}};
  auto lite = Sqlite({});
  const Schema lite_empty = SqliteSchema(lite->database());
  ASSERT_TRUE(lite->Migrate().ok());
  auto pg = Postgres({});
  const Schema pg_empty = PostgresSchema(pg->connection());
  ASSERT_TRUE(pg->Migrate().ok());
  const Schema lite_core =
      Added(lite_empty, SqliteSchema(lite->database()), core.sqlite.private_tables);
  const Schema pg_core =
      Added(pg_empty, PostgresSchema(pg->connection()), core.postgres.private_tables);
  const std::vector<std::string> differences = Differences(lite_core, pg_core);
  for (const std::string& d : differences) ADD_FAILURE() << d;
  ASSERT_EQ(lite_core.count("call_log"), 1u);
  for (const char* column : {"cache_status", "agent_id", "agent_version", "response_id",
                             "guard_replacements", "flags", "tenant_id", "cost_micros"}) {
    EXPECT_EQ(lite_core.at("call_log").count(column), 1u) << column;
  }
  EXPECT_EQ(lite_core.at("call_log").at("agent_id"), "text");
  EXPECT_EQ(pg_core.at("call_log").at("flags"), "integer");
}

// The product's feature roles: the agent door's, the webhook outbox's.
TEST_F(SchemaParityTest, TheAgentsRoleAgreesOnBothEngines) {
  const std::vector<std::string> differences = Compare(agents::AgentsRole().schema, {});
  for (const std::string& d : differences) ADD_FAILURE() << d;
}

TEST_F(SchemaParityTest, TheWebhooksRoleAgreesOnBothEngines) {
  const std::vector<std::string> differences = Compare(webhooks::WebhooksRole().schema, {});
  for (const std::string& d : differences) ADD_FAILURE() << d;
}

// Governance's own role: tenants' provider keys and the admin audit log.
TEST_F(SchemaParityTest, TheSecurityRoleAgreesOnBothEngines) {
  const std::vector<std::string> differences = Compare(control::SecurityRole().schema, {});
  for (const std::string& d : differences) ADD_FAILURE() << d;
}

// A feature role's two halves (store/role.h), as a feature's folder declares them.
constexpr std::array<std::string_view, 2> kWidgetsSqlite = {
    "CREATE TABLE widgets (tenant_id TEXT NOT NULL, id TEXT NOT NULL, n INTEGER NOT NULL, "
    "PRIMARY KEY (tenant_id, id))",
    "ALTER TABLE widgets ADD COLUMN body BLOB; CREATE TABLE widgets_fts (x TEXT)"};
constexpr std::array<std::string_view, 2> kWidgetsPostgres = {
    "CREATE TABLE widgets (tenant_id TEXT NOT NULL, id TEXT NOT NULL, n BIGINT NOT NULL, "
    "PRIMARY KEY (tenant_id, id))",
    "ALTER TABLE widgets ADD COLUMN body BYTEA"};
constexpr std::array<std::string_view, 1> kWidgetsSqlitePrivate = {"widgets_fts"};
constexpr std::array<std::string_view, 1> kWidgetsPurposes = {"widget_read"};

RoleSchema WidgetsSchema() {
  return {
      "widgets", {kWidgetsSqlite, kWidgetsSqlitePrivate}, {kWidgetsPostgres, {}}, kWidgetsPurposes};
}

TEST_F(SchemaParityTest, AFeatureRoleAgreesAndItsPrivateTablesAreSkipped) {
  const std::vector<std::string> differences = Compare(WidgetsSchema(), {});
  for (const std::string& d : differences) ADD_FAILURE() << d;
}

// The comparison can fail: a column typed apart, and a table one engine lacks.
TEST_F(SchemaParityTest, ARoleWhoseEnginesDisagreeIsReported) {
  static constexpr std::array<std::string_view, 1> kPostgres = {
      "CREATE TABLE widgets (tenant_id TEXT NOT NULL, id TEXT NOT NULL, n TEXT NOT NULL, "
      "PRIMARY KEY (tenant_id, id)); CREATE TABLE widget_tags (tag TEXT)"};
  const RoleSchema skewed{"widgets",
                          {std::span<const std::string_view>(kWidgetsSqlite).first(1), {}},
                          {kPostgres, {}},
                          {}};
  const std::vector<std::string> differences = Compare(skewed, {});
  EXPECT_EQ(differences,
            (std::vector<std::string>{"widget_tags: only on postgres",
                                      "widgets.n: integer on sqlite, text on postgres"}));
}

// The role's object for one session, over that session's connection.
class Widgets : public Role {
 public:
  Widgets(postgres::Connection& db, StoreOp read) : db_(db), read_(read) {}
  int64_t Count() {
    auto rows = db_.Run("SELECT COUNT(*) FROM widgets", postgres::Params{}, read_);
    return rows.ok() ? rows->Int(0, 0) : -1;
  }
  postgres::Connection* connection() { return &db_; }
  StoreOp read_op() const { return read_; }

 private:
  postgres::Connection& db_;
  StoreOp read_;
};

RoleSpec WidgetsSpec() {
  RoleSpec spec;
  spec.schema = WidgetsSchema();
  spec.postgres = [](postgres::Connection& db, RoleOps ops) -> std::unique_ptr<Role> {
    return std::make_unique<Widgets>(db, ops[0]);
  };
  return spec;
}

TEST_F(SchemaParityTest, ARoleIsVersionedOnItsOwnWithAnObjectPerSession) {
  auto pg = Postgres({WidgetsSpec()}, /*pool=*/3);
  ASSERT_TRUE(pg->Migrate().ok());
  EXPECT_EQ(pg->RoleVersion("widgets"), 2);
  EXPECT_EQ(pg->SchemaVersion(), postgres::LatestSchemaVersion());
  ASSERT_TRUE(pg->Migrate().ok());  // again: nothing to do
  EXPECT_EQ(pg->RoleVersion("widgets"), 2);
  // Each session's own object, over its own connection.
  std::set<postgres::Connection*> connections;
  for (size_t i = 0; i < pg->sessions(); ++i) {
    Widgets* widgets = pg->session(i).role<Widgets>();
    ASSERT_NE(widgets, nullptr);
    EXPECT_EQ(widgets->Count(), 0);
    connections.insert(widgets->connection());
  }
  EXPECT_EQ(connections.size(), 3u);
  // Its purpose is counted under its own name, past StoreOp's.
  const StoreOp read = pg->role<Widgets>()->read_op();
  EXPECT_GE(static_cast<size_t>(read), static_cast<size_t>(StoreOp::kCount));
  EXPECT_EQ(pg->statements().value(read), 3u);
  EXPECT_EQ(pg->statements().Name(read), "widget_read");
  // Registered twice, or as the core role: refused.
  EXPECT_EQ(pg->AddRole(WidgetsSpec()).error().code, ErrorCode::kInvalidRequest);
  RoleSpec core = WidgetsSpec();
  core.schema.name = "core";
  EXPECT_EQ(pg->AddRole(core).error().code, ErrorCode::kInvalidRequest);
}

TEST_F(SchemaParityTest, ARoleNewerThanTheBinaryIsRefused) {
  ASSERT_TRUE(Postgres({WidgetsSpec()})->Migrate().ok());
  ASSERT_TRUE(cluster_->Psql(
      "INSERT INTO schema_migrations (role, version, applied_at) VALUES ('widgets', 3, 0)", db_));
  Status refused = Postgres({WidgetsSpec()})->Migrate();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("of role widgets is newer"), std::string::npos);
  // Without the role registered the engine does not look at it.
  EXPECT_TRUE(Postgres({})->Migrate().ok());
}

}  // namespace
}  // namespace turnpike::store
