// The Lua scripts of agent turns in fleet mode (doors/agents/redis/redis_fleet.h), each one
// atomic call (EVALSHA): what makes "one turn in flight per conversation" and "a replica's
// cached memory is current" hold across replicas at one round trip before the first token.
//
// Keys (a single Redis, not a cluster: the renew script builds names from ids):
//   turnpike:agents:lock:<conversation>    the response id of the turn holding the conversation,
//                                          PX the owner TTL (renewed while the turn runs)
//   turnpike:agents:version:<conversation> an opaque token that changes with every write to the
//                                          conversation's items (EX 7 days, set by the scripts)
//   turnpike:agents:owner:<response>       "<replica>\n<tenant>" while the turn runs, PX the
//                                          owner TTL (renewed while the turn runs)
//   turnpike:agents:cancel:<response>      a cancel asked by replica <value>, PX kCancelFlagMs
//   turnpike:agents:sweeper                the replica that sweeps orphaned turns
// Channel: turnpike:agents:replica:<replica>, messages "cancel\n<response>\n<tenant>\n<from>"
// and "stopped\n<response>\n<response object>".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace turnpike::redis {

inline constexpr std::string_view kAgentLockPrefix = "turnpike:agents:lock:";
inline constexpr std::string_view kAgentVersionPrefix = "turnpike:agents:version:";
inline constexpr std::string_view kAgentOwnerPrefix = "turnpike:agents:owner:";
inline constexpr std::string_view kAgentCancelPrefix = "turnpike:agents:cancel:";
inline constexpr std::string_view kAgentSweeperKey = "turnpike:agents:sweeper";
inline constexpr std::string_view kAgentChannelPrefix = "turnpike:agents:replica:";

// The scripts in the order app/ appends them to ClientOptions::scripts, after the lease
// scripts: Client::Sha(first + AgentScript).
enum AgentScript : size_t { kAgentClaim, kAgentRelease, kAgentRenew, kAgentCancel, kAgentSweeper };
std::vector<std::string> AgentScripts();

// Claim: KEYS 1 lock, 2 version, 3 owner; ARGV 1 response id, 2 owner TTL ms, 3 the version
// the replica's cached memory was read at ("" none), 4 the owner value, 5 a fresh version token
// (used when the version key is missing: a lost or never-written conversation).
// Returns {1, version, current 0/1} when the lock was taken (or was already this turn's);
// {0, holder} when another turn holds it.
extern const std::string_view kAgentClaimScript;

// Release: KEYS 1 lock, 2 version, 3 owner; ARGV 1 response id, 2 a new version token ("": the
// turn wrote nothing). Deletes the lock when it is still this turn's, and the owner key; sets the
// new version (even when the lock was lost: a bump only makes other replicas read the store).
// Returns 1 when the lock was this turn's, 0 when it had expired or been taken.
extern const std::string_view kAgentReleaseScript;

// Renew (every owner TTL / 3 per replica, one call for all its running turns): ARGV 1 owner TTL
// ms, then triples (response id, conversation or "", owner value). The owner key is set again
// (re-created after a Redis restart); the lock extended when still the turn's, taken again when
// missing. Returns the number of locks held by another turn (lost after a Redis restart).
extern const std::string_view kAgentRenewScript;

// Cancel: KEYS 1 owner, 2 cancel flag; ARGV 1 tenant, 2 response id, 3 the asking replica,
// 4 flag TTL ms. When a turn of `tenant` runs: sets the flag, publishes the cancel to its
// replica's channel, returns that replica; else "".
extern const std::string_view kAgentCancelScript;

// Sweeper lease: KEYS 1 sweeper; ARGV 1 replica, 2 TTL ms. 1 when this replica sweeps now.
extern const std::string_view kAgentSweeperScript;

}  // namespace turnpike::redis
