#include "redis/agent_scripts.h"

namespace turnpike::redis {

const std::string_view kAgentClaimScript = R"lua(
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return {0, holder} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[2])
local version = redis.call('GET', KEYS[2])
if not version then
  version = ARGV[5]
  redis.call('SET', KEYS[2], version, 'EX', 604800)
end
if version == ARGV[3] then return {1, version, 1} end
return {1, version, 0}
)lua";

const std::string_view kAgentReleaseScript = R"lua(
local mine = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  mine = 1
end
redis.call('DEL', KEYS[3])
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2], 'EX', 604800) end
return mine
)lua";

const std::string_view kAgentRenewScript = R"lua(
local ttl = ARGV[1]
local lost = 0
for i = 2, #ARGV, 3 do
  local id = ARGV[i]
  local conversation = ARGV[i + 1]
  redis.call('SET', 'turnpike:agents:owner:' .. id, ARGV[i + 2], 'PX', ttl)
  if conversation ~= '' then
    local lock = 'turnpike:agents:lock:' .. conversation
    local holder = redis.call('GET', lock)
    if holder == id then
      redis.call('PEXPIRE', lock, ttl)
    elseif not holder then
      redis.call('SET', lock, id, 'PX', ttl)
    else
      lost = lost + 1
    end
  end
end
return lost
)lua";

const std::string_view kAgentCancelScript = R"lua(
local owner = redis.call('GET', KEYS[1])
if not owner then return '' end
local sep = string.find(owner, '\n', 1, true)
if not sep or string.sub(owner, sep + 1) ~= ARGV[1] then return '' end
local replica = string.sub(owner, 1, sep - 1)
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
redis.call('PUBLISH', 'turnpike:agents:replica:' .. replica,
           'cancel\n' .. ARGV[2] .. '\n' .. ARGV[1] .. '\n' .. ARGV[3])
return replica
)lua";

const std::string_view kAgentSweeperScript = R"lua(
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
)lua";

std::vector<std::string> AgentScripts() {
  return {std::string(kAgentClaimScript), std::string(kAgentReleaseScript),
          std::string(kAgentRenewScript), std::string(kAgentCancelScript),
          std::string(kAgentSweeperScript)};
}

}  // namespace turnpike::redis
