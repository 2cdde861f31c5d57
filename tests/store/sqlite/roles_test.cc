// The embedded engine's store roles (store/role.h) and migration 8: a database made before
// roles upgrades in place (its versions become the core role's), migration 8's call-log fields
// round-trip set and unset, and a feature role is versioned on its own, reached with role<T>()
// and counted under its own purpose.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>

#include "store/sqlite/engine.h"
#include "store/sqlite/migrations.h"

namespace turnpike::store::sqlite {
namespace {

class SqliteRolesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("turnpike-roles-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<SqliteEngine> Open(const std::vector<RoleSpec>& roles = {}) {
    auto opened = OpenEngine((dir_ / "t.db").string(), {});
    EXPECT_TRUE(opened.ok());
    for (const RoleSpec& role : roles) EXPECT_TRUE(opened.value()->AddRole(role).ok());
    return std::move(opened.value());
  }
  static int64_t One(Database& db, const std::string& sql) {
    auto q = db.Prepare(sql, StoreOp::kAdminRead);
    EXPECT_TRUE(q.ok());
    if (!q.ok()) return -1;
    auto row = q->Step();
    return row.ok() && row.value() ? q->Int(0) : -1;
  }

  std::filesystem::path dir_;
};

CallRecord Plain(const std::string& request_id) {
  CallRecord r;
  r.request_id = request_id;
  r.tenant_id = "acme";
  r.key_id = "k1";
  r.model = "m";
  r.status = 200;
  r.cost_micros = 4;
  r.month = governance::MonthOf(1'790'000'000);
  return r;
}

CallRecord Agent(const std::string& request_id) {
  CallRecord r = Plain(request_id);
  r.cache_status = CacheStatus::kHit;
  r.agent_id = "support-bot";
  r.agent_version = 7;
  r.response_id = "resp_" + request_id;
  r.guard_replacements = 2;
  r.flags = call_flags::kStreamed | call_flags::kFailedOver;
  return r;
}

void ExpectUnset(const CallRecord& r) {
  EXPECT_EQ(r.cache_status, CacheStatus::kNone);
  EXPECT_EQ(r.agent_id, "");
  EXPECT_EQ(r.agent_version, 0);
  EXPECT_EQ(r.response_id, "");
  EXPECT_EQ(r.guard_replacements, 0);
  EXPECT_EQ(r.flags, 0u);
}

Status Write(SqliteEngine& engine, const std::vector<CallRecord>& records) {
  CallBatch batch;
  for (const CallRecord& r : records) batch.Add(ViewOf(r));
  const CallBatchPart part{&batch, 0, batch.size()};
  return engine.call_log().WriteCalls({&part, 1}, true, {});
}

TEST_F(SqliteRolesTest, MigrationEightsFieldsRoundTripSetAndUnset) {
  auto engine = Open();
  ASSERT_TRUE(engine->Migrate().ok());
  // More rows than one multi-row INSERT takes: both statements bind the new columns.
  std::vector<CallRecord> records;
  for (int i = 0; i < 40; ++i) {
    records.push_back(i % 2 == 0 ? Agent("r" + std::to_string(i)) : Plain("r" + std::to_string(i)));
  }
  ASSERT_TRUE(Write(*engine, records).ok());
  CallQuery q;
  auto page = engine->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->size(), 40u);
  for (const CallRow& row : page.value()) {
    const CallRecord& r = row.record;
    const int i = std::stoi(r.request_id.substr(1));
    if (i % 2 == 1) {
      ExpectUnset(r);
      continue;
    }
    EXPECT_EQ(r.cache_status, CacheStatus::kHit);
    EXPECT_EQ(r.agent_id, "support-bot");
    EXPECT_EQ(r.agent_version, 7);
    EXPECT_EQ(r.response_id, "resp_" + r.request_id);
    EXPECT_EQ(r.guard_replacements, 2);
    EXPECT_EQ(r.flags, call_flags::kStreamed | call_flags::kFailedOver);
  }
  // The view has them too.
  EXPECT_EQ(One(engine->database(), "SELECT SUM(guard_replacements) FROM call_log"), 40);
}

// A file made by the binary before roles: schema_migrations (version) at the core schema's 7,
// and a call-log row of that schema.
TEST_F(SqliteRolesTest, ADatabaseOfSchemaSevenBeforeRolesUpgradesInPlace) {
  {
    auto engine = Open();
    ASSERT_TRUE(engine->MigrateTo(7).ok());
    ASSERT_TRUE(
        engine->database()
            .Exec("DROP TABLE schema_migrations; CREATE TABLE schema_migrations (version "
                  "INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL); INSERT INTO "
                  "schema_migrations VALUES (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (7, "
                  "0); INSERT INTO call_routes (id, tenant_id, key_id, model, deployment, month) "
                  "VALUES (1, 'acme', 'k1', 'm', 'd', '2026-10'); INSERT INTO call_log_rows (id, "
                  "time_ms, request_id, route_id, status, error, prompt_tokens, "
                  "completion_tokens, cached_tokens, cache_creation_tokens, cost_micros, "
                  "estimated, unpriced, ttft_us, total_us, overhead_us, request_body, "
                  "dropped_rows, reasoning_tokens) VALUES (1, 5, 'old', 1, 200, '', 1, 2, 0, 0, "
                  "3, 0, 0, NULL, 4000, NULL, NULL, 0, 0)",
                  StoreOp::kAdminWrite)
            .ok());
    EXPECT_EQ(engine->SchemaVersion(), 7);  // read from the table before roles
    EXPECT_EQ(engine->RoleVersion("widgets"), 0);
  }
  auto engine = Open();
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(engine->SchemaVersion(), LatestSchemaVersion());
  Database& db = engine->database();
  EXPECT_EQ(One(db, "SELECT COUNT(*) FROM schema_migrations WHERE role = 'core'"),
            LatestSchemaVersion());
  EXPECT_EQ(One(db, "SELECT COUNT(*) FROM schema_migrations WHERE role <> 'core'"), 0);
  EXPECT_EQ(One(db, "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%before_roles%'"), 0);
  ASSERT_TRUE(Write(*engine, {Agent("new")}).ok());
  CallQuery q;
  auto page = engine->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->size(), 2u);
  const CallRecord& old = page->at(1).record;
  EXPECT_EQ(old.request_id, "old");
  EXPECT_EQ(old.cost_micros, 3);
  EXPECT_EQ(old.tenant_id, "acme");
  ExpectUnset(old);
  EXPECT_EQ(page->at(0).record.agent_id, "support-bot");
  // Migrating again changes nothing.
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(One(db, "SELECT COUNT(*) FROM schema_migrations"), LatestSchemaVersion());
}

// A feature role as its folder declares it (store/role.h).
constexpr std::array<std::string_view, 2> kNotes = {
    "CREATE TABLE notes (tenant_id TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
    "ALTER TABLE notes ADD COLUMN body TEXT NOT NULL DEFAULT ''"};
constexpr std::array<std::string_view, 1> kNotesPurposes = {"note_read"};

class Notes : public Role {
 public:
  Notes(Database& db, StoreOp read) : db_(db), read_(read) {}
  int64_t Count() {
    auto q = db_.Prepare("SELECT COUNT(*) FROM notes", read_);
    if (!q.ok()) return -1;
    auto row = q->Step();
    return row.ok() && row.value() ? q->Int(0) : -1;
  }
  StoreOp read_op() const { return read_; }

 private:
  Database& db_;
  StoreOp read_;
};

RoleSpec NotesSpec(std::span<const std::string_view> migrations = kNotes) {
  RoleSpec spec;
  spec.schema = {"notes", {migrations, {}}, {kNotes, {}}, kNotesPurposes};
  spec.sqlite = [](Database& db, RoleOps ops) -> std::unique_ptr<Role> {
    return std::make_unique<Notes>(db, ops[0]);
  };
  return spec;
}

TEST_F(SqliteRolesTest, AFeatureRoleIsVersionedOnItsOwnAndReachedByItsType) {
  {
    // Its first version only (a binary before the role's second migration).
    auto engine = Open({NotesSpec(std::span<const std::string_view>(kNotes).first(1))});
    ASSERT_TRUE(engine->Migrate().ok());
    EXPECT_EQ(engine->RoleVersion("notes"), 1);
    EXPECT_EQ(engine->SchemaVersion(), LatestSchemaVersion());
  }
  auto engine = Open({NotesSpec()});
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(engine->RoleVersion("notes"), 2);
  Notes* notes = engine->role<Notes>();
  ASSERT_NE(notes, nullptr);
  EXPECT_EQ(notes->Count(), 0);
  const StoreOp read = notes->read_op();
  EXPECT_EQ(engine->statements().value(read), 1u);
  EXPECT_EQ(engine->statements().Name(read), "note_read");
  observability::PrometheusWriter w;
  engine->statements().Render(w);
  EXPECT_NE(w.Take().find("turnpike_store_statements_total{op=\"note_read\"} 1"),
            std::string::npos);
  // Refused: twice, as "core", a bad name, no migrations for this engine.
  EXPECT_EQ(engine->AddRole(NotesSpec()).error().code, ErrorCode::kInvalidRequest);
  RoleSpec bad = NotesSpec();
  for (std::string_view name : {"core", "Bad-Name", ""}) {
    bad.schema.name = name;
    EXPECT_EQ(engine->AddRole(bad).error().code, ErrorCode::kInvalidRequest) << name;
  }
  bad.schema.name = "empty";
  bad.schema.sqlite = {};
  EXPECT_EQ(engine->AddRole(bad).error().code, ErrorCode::kInvalidRequest);
  // An engine the role was not registered with has no object for it.
  EXPECT_EQ(Open()->role<Notes>(), nullptr);
}

TEST_F(SqliteRolesTest, ARoleNewerThanTheBinaryIsRefused) {
  auto engine = Open({NotesSpec()});
  ASSERT_TRUE(engine->Migrate().ok());
  ASSERT_TRUE(engine->database()
                  .Exec("INSERT INTO schema_migrations (role, version, applied_at) VALUES "
                        "('notes', 3, 0)",
                        StoreOp::kAdminWrite)
                  .ok());
  Status refused = Open({NotesSpec()})->Migrate();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("of role notes is newer"), std::string::npos);
}

}  // namespace
}  // namespace turnpike::store::sqlite
