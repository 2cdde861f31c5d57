// The one Lua script of the lease protocol (lease_counters.h), run with EVALSHA: a replica's
// whole conversation with the ledger of one budget scope and month is this one atomic call.
//
// KEYS[1]  the ledger hash: "floor" + "added" = spent (settled spend the fleet reported: added
//          sums this generation's reports, floor is the seed or the largest older-generation
//          view a replica brought after a Redis restart), "gen" (this generation's id), "rebuilt"
//          (ms, when a replica that had used the ledger found it gone) and one field
//          "l:<replica>" = "<amount>:<expiry ms>" per live lease
// ARGV     1 replica id, 2 cap, 3 report (spend settled since the last call), 4 give (unused
//          lease handed back), 5 need (what a waiting request lacks), 6 held (the replica's lease
//          as it believes it: re-registered when the field is gone, e.g. after a Redis restart),
//          7 base (the replica's last view of spent, of generation ARGV 12; or the store's spend
//          at start, with ARGV 12 empty: then it only seeds a missing ledger), 8 lease ttl ms,
//          9 mode ("refill" may lease more; "keep" only reports, gives back and renews),
//          10 ledger ttl seconds, 11 history ("1": the replica used this ledger before, so a
//          missing ledger was lost, not new: no slice is granted for one TTL while the replicas
//          re-register), 12 the generation of base
// Returns  {lease, spent, free (-1: settling after a rebuild), live leases, rebuilt 0/1, gen}
//
// What it keeps true: spent + the sum of live leases <= cap, whatever the replicas claim (a
// re-registered or over-reported lease is cut down to what is free). Expired leases of other
// replicas are deleted as it reads them. Time is the server's (TIME), so replica clocks do not
// matter. Amounts are integer micro-USD below 2^47: exact in Lua's doubles.
#pragma once

#include <string_view>

namespace turnpike::redis {

extern const std::string_view kLeaseScript;

}  // namespace turnpike::redis

namespace turnpike::redis {

// The rate-limit lease script: a fleet-wide GCRA (governance/rate_limit.h) whose units are
// leased in slices. The key is a hash: "tat" (the shared TAT, µs, server time), "gen" (this
// window's generation) and "rebuilt" (µs, when a replica that had leased from it found it gone).
// A replica's call gives back `give` unused units (TAT moves back, never before now) and leases
// up to `want` units that fit the window now (TAT moves forward by each). Units are charged when
// leased, so the fleet never admits more than one GCRA at the limit would, plus what a replica
// holds unused (at most a slice, given back when its scope goes idle).
// A Redis restart loses the window. Every call carries `recent` (the units the caller leased in
// the last minute, redis/recent_grants.h) and the generation it leased them from: a caller whose
// generation is not the key's adds them (at most one window) to the TAT, once per generation.
// A missing key with recent > 0 can only have been lost (the key outlives its last call by two
// windows), so it is marked rebuilt and grants nothing for `settle` ms while the other replicas
// re-register theirs (the budget ledger's settling time, same length).
// KEYS[1] the window; ARGV 1 limit per minute, 2 want, 3 give, 4 recent, 5 the caller's
// generation ("": none yet), 6 settle ms, 7 replica id
// Returns {granted, room left after, µs until `want` would have fit, generation}
extern const std::string_view kRateScript;

}  // namespace turnpike::redis
