// Cost of governance admission and its parts: key parse, snapshot lookup, SHA-256 verify,
// budget reserve/settle, GCRA checks, snapshot publication reads. Time is injected (each
// iteration advances a fake monotonic clock) so rate limits never refuse in the loop.
// Threads(2) variants have both threads hit the same tenant: the contended case.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "governance/admission.h"
#include "governance/local_counters.h"
#include "governance/snapshot_cell.h"

namespace {

using namespace turnpike::governance;

constexpr int kKeys = 10'000;
constexpr int64_t kNowUnix = 1'717'200'000;
constexpr char kModel[] = "gpt-4o-mini";
constexpr int64_t kPromptBytes = 300;  // 100 estimated tokens
constexpr int64_t kMaxTokens = 50;
// Advancing the fake clock this much per request keeps RPM and TPM (150 tokens at 60 ns each,
// from two threads) below their limits.
constexpr Nanos kClockStep = std::chrono::microseconds(20);

// Fake monotonic time for the limiter loops (no clock read in the measured loop). Each thread
// advances its own clock and, every kSyncEvery ticks, catches up with the shared mark (and
// raises it), so a descheduled thread never falls the 60 s window behind the other and the
// limiters never refuse; limiter state outlives a run, so a run starts from the mark too.
class RunClock {
 public:
  RunClock() : now_(Mark().load()) {}
  ~RunClock() { Sync(); }
  Nanos Tick() {
    if (++ticks_ % kSyncEvery == 0) Sync();
    return now_ += kClockStep;
  }

 private:
  static constexpr int kSyncEvery = 1024;
  static std::atomic<int64_t>& Mark() {
    static std::atomic<int64_t> mark{Nanos(std::chrono::hours(1)).count()};
    return mark;
  }
  void Sync() {
    int64_t mark = Mark().load();
    while (mark < now_.count() && !Mark().compare_exchange_weak(mark, now_.count())) {
    }
    now_ = std::max(now_, Nanos(mark));
  }
  Nanos now_;
  int64_t ticks_ = 0;
};

struct World {
  SnapshotPtr snapshot;
  std::vector<std::string> keys;  // full keys, as clients present them
};

// One tenant on an RPM+TPM plan (2 rate checks per request) with kKeys keys.
const World& TheWorld() {
  static const World world = [] {
    World w;
    SnapshotData data;
    Plan plan;
    plan.id = "pro";
    plan.monthly_budget_micros = kMaxBudgetMicros;
    plan.rpm = kMaxRateLimit;
    plan.tpm = kMaxRateLimit;
    data.plans.push_back(plan);
    data.tenants.push_back({"acme", "Acme", TenantStatus::kActive, "pro"});
    for (int i = 0; i < kKeys; ++i) {
      GeneratedKey generated = GenerateKey().value();
      Key key;
      key.public_id = generated.public_id;
      key.tenant_id = "acme";
      key.secret_hash = generated.secret_hash;
      data.keys.push_back(key);
      w.keys.push_back(generated.key);
    }
    data.prices.push_back({kModel, ModelPrice{150'000, 600'000, 75'000, 16'384}});
    LocalCounters counters;  // its scopes do not refer back to it
    w.snapshot = GovernanceSnapshot::Build(std::move(data), nullptr, counters).value();
    return w;
  }();
  return world;
}

const std::string& KeyAt(int64_t i) { return TheWorld().keys[i % kKeys]; }

void BM_ParseKey(benchmark::State& state) {
  int64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(ParseKey(KeyAt(i++)));
}
BENCHMARK(BM_ParseKey);

void BM_SnapshotFindKey(benchmark::State& state) {
  const World& world = TheWorld();
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(world.snapshot->FindKey(ParseKey(KeyAt(i++))->public_id));
  }
}
BENCHMARK(BM_SnapshotFindKey);

void BM_VerifySecretOneShot(benchmark::State& state) {
  const World& world = TheWorld();
  ParsedKey parsed = *ParseKey(KeyAt(0));
  const SecretHash& hash = world.snapshot->FindKey(parsed.public_id)->key.secret_hash;
  for (auto _ : state) benchmark::DoNotOptimize(VerifySecret(parsed.secret, hash));
}
BENCHMARK(BM_VerifySecretOneShot);

// The hash path of the request's verifier (reused context): a secret it has not verified
// before. A wrong secret of the right length is hashed every time, as a new key's is once.
void BM_VerifySecretHashed(benchmark::State& state) {
  const World& world = TheWorld();
  SecretVerifier verifier = std::move(SecretVerifier::Create().value());
  ParsedKey parsed = *ParseKey(KeyAt(0));
  const SecretHash& hash = world.snapshot->FindKey(parsed.public_id)->key.secret_hash;
  std::string wrong(parsed.secret);
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  for (auto _ : state) benchmark::DoNotOptimize(verifier.Verify(wrong, hash));
}
BENCHMARK(BM_VerifySecretHashed);

// A key the worker verified before: one constant-time compare of the remembered secret.
void BM_VerifySecretRemembered(benchmark::State& state) {
  const World& world = TheWorld();
  SecretVerifier verifier = std::move(SecretVerifier::Create().value());
  ParsedKey parsed = *ParseKey(KeyAt(0));
  const SecretHash& hash = world.snapshot->FindKey(parsed.public_id)->key.secret_hash;
  for (auto _ : state) benchmark::DoNotOptimize(verifier.Verify(parsed.secret, hash));
}
BENCHMARK(BM_VerifySecretRemembered);

void BM_BudgetReserveSettle(benchmark::State& state) {
  static LocalBudgetCounter counter;  // shared by the Threads(2) run
  MonthId month = MonthOf(kNowUnix);
  for (auto _ : state) {
    ReserveResult r = counter.Reserve(month, 450, kUnlimitedBudget);
    r->Settle(21);
  }
}
BENCHMARK(BM_BudgetReserveSettle)->Threads(1)->Threads(2);

void BM_GcraCheck(benchmark::State& state) {
  static GcraLimiter limiter;  // shared by the Threads(2) run
  RunClock clock;
  for (auto _ : state) {
    RateDecision decision = limiter.Check(clock.Tick(), 1, kMaxRateLimit);
    if (!decision.allowed) {
      state.SkipWithError("refused");
      break;
    }
  }
}
BENCHMARK(BM_GcraCheck)->Threads(1)->Threads(2);

void BM_SnapshotCellLoad(benchmark::State& state) {
  static SnapshotCell cell(TheWorld().snapshot);
  for (auto _ : state) benchmark::DoNotOptimize(cell.Load());
}
BENCHMARK(BM_SnapshotCellLoad)->Threads(1)->Threads(2);

void BM_SnapshotReaderCurrentCopy(benchmark::State& state) {
  static SnapshotCell cell(TheWorld().snapshot);
  SnapshotReader reader(cell);
  for (auto _ : state) {
    SnapshotPtr held = reader.Current();  // what a request keeps
    benchmark::DoNotOptimize(held);
  }
}
BENCHMARK(BM_SnapshotReaderCurrentCopy)->Threads(1)->Threads(2);

// The whole admission: parse + lookup + verify + model check + estimate + key and tenant
// budget reserve + tenant RPM and TPM checks; then Complete (settle both budgets, correct TPM).
void BM_AdmitAndComplete(benchmark::State& state) {
  static SnapshotCell cell(TheWorld().snapshot);
  SnapshotReader reader(cell);
  SecretVerifier verifier = std::move(SecretVerifier::Create().value());
  RunClock clock;
  int64_t i = state.thread_index() * (kKeys / 2);
  for (auto _ : state) {
    SnapshotPtr snapshot = reader.Current();
    AdmissionRequest request{KeyAt(i++),   kModel, kPromptBytes, kMaxTokens, kNowUnix,
                             clock.Tick(), {}};
    AdmitResult result = Admit(*snapshot, verifier, request);
    if (result.refusal) {
      state.SkipWithError(result.refusal->message.c_str());
      break;
    }
    result.admission.Complete({90, 12, 0});
  }
}
BENCHMARK(BM_AdmitAndComplete)->Threads(1)->Threads(2);

// Admission alone (the result is destroyed unsettled: reservations released, TPM refunded).
void BM_AdmitAndRelease(benchmark::State& state) {
  static SnapshotCell cell(TheWorld().snapshot);
  SnapshotReader reader(cell);
  SecretVerifier verifier = std::move(SecretVerifier::Create().value());
  RunClock clock;
  int64_t i = 0;
  for (auto _ : state) {
    SnapshotPtr snapshot = reader.Current();
    AdmissionRequest request{KeyAt(i++),   kModel, kPromptBytes, kMaxTokens, kNowUnix,
                             clock.Tick(), {}};
    AdmitResult result = Admit(*snapshot, verifier, request);
    if (result.refusal) {
      state.SkipWithError(result.refusal->message.c_str());
      break;
    }
  }
}
BENCHMARK(BM_AdmitAndRelease);

}  // namespace
