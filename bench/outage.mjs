// PostgreSQL and Redis outages under a longer load than CI's (docs/RELIABILITY.md "Store and
// Redis outages"): the fleet of tests/integration/lib/outage.mjs (one PostgreSQL 15, one
// redis-server, the mock provider, two replicas with the default fleet.outage_deadline of 2 s),
// then each outage in turn (PostgreSQL killed, frozen; Redis killed, frozen), each held
// `hold` seconds under `clients` clients sending back to back, `runs` times. Prints per run the
// counts tests/integration/fleet_outages.test.mjs asserts (requests over the deadline + 1 s,
// unanswered, statuses other than 200/429/503, 503s without Retry-After, 200s whose call-log row
// is missing or doubled) and the statuses. Run by hand, not in CI:
//   TURNPIKE_BIN=build/src/app/turnpike node bench/outage.mjs [clients] [hold_s] [runs]
import { stopAll, eventually } from '../tests/integration/lib/harness.mjs';
import { stopRedis } from '../tests/integration/lib/redis.mjs';
import { stopAllPostgres } from '../tests/integration/lib/postgres.mjs';
import { OUTAGES, startFleet, provision, chat, loadThrough, tally, checkRows } from '../tests/integration/lib/outage.mjs';

const CLIENTS = Number(process.argv[2] ?? 16);
const HOLD_S = Number(process.argv[3] ?? 12);
const RUNS = Number(process.argv[4] ?? 2);

const fleet = await startFleet();
let failed = 0;
try {
  let n = 0;
  for (let run = 1; run <= RUNS; ++run) {
    for (const outage of Object.keys(OUTAGES)) {
      const tenant = `bench${++n}`;
      const { key } = await provision(fleet.gws[0], tenant);
      // Every replica knows the new key before the load starts (else B's first answers are 401).
      for (const gw of fleet.gws) {
        let i = 0;
        await eventually(async () => (await chat(gw, key, `${tenant}-warm-${gw.port}-${++i}`)).status === 200, 5000, 20);
      }
      const started = Date.now();
      const { results } = await loadThrough(fleet, {
        secret: key, tag: tenant, outage, clients: CLIENTS, beforeMs: 1000, holdMs: HOLD_S * 1000, afterMs: 2000,
      });
      const elapsedS = (Date.now() - started) / 1000;
      const t = tally(results);
      const rows = await checkRows(fleet, tenant, results, 30_000);
      const broken = t.overDeadline + t.unanswered + t.badStatus + t.bad503 + rows.missing + rows.doubled;
      failed += broken > 0 ? 1 : 0;
      console.log(`${outage} (run ${run}, ${HOLD_S}s held, ${CLIENTS} clients, ${elapsedS.toFixed(1)}s): ` +
        `${t.total} requests ${JSON.stringify(t.statuses)}, over deadline ${t.overDeadline}, unanswered ${t.unanswered}, ` +
        `other statuses ${t.badStatus}, 503 without Retry-After ${t.bad503}, slowest ${t.slowestMs} ms; ` +
        `200s ${rows.ok}, rows missing ${rows.missing}, doubled ${rows.doubled}`);
    }
  }
} finally {
  await stopAll();
  if (fleet.redis) await stopRedis(fleet.redis);
  stopAllPostgres();
}
process.exitCode = failed > 0 ? 1 : 0;
