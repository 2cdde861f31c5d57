#include "redis/lease_script.h"

namespace turnpike::redis {

// New slices are free / (4 * live leases), at least what a waiting request needs: small when
// little is left or many replicas share the scope, so the last dollars are not stranded.
const std::string_view kLeaseScript = R"lua(
local h = KEYS[1]
local field = 'l:' .. ARGV[1]
local cap = tonumber(ARGV[2])
local report = tonumber(ARGV[3])
local give = tonumber(ARGV[4])
local need = tonumber(ARGV[5])
local held = tonumber(ARGV[6])
local ttl = tonumber(ARGV[8])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rebuilt = 0
if redis.call('EXISTS', h) == 0 then
  redis.call('HSET', h, 'floor', ARGV[7], 'added', 0, 'gen', tostring(now) .. '-' .. ARGV[1])
  if ARGV[11] == '1' then redis.call('HSET', h, 'rebuilt', now) end
  rebuilt = 1
end
-- For one lease TTL after a rebuild (the ledger was missing, and the caller had used it) no new
-- slice is granted: every live replica re-registers its lease within that time, and a slice
-- granted before would take budget a replica still holds.
local settling = now < tonumber(redis.call('HGET', h, 'rebuilt') or '0') + ttl
-- spent = floor + added. `added` sums the reports made to this generation of the ledger;
-- `floor` is the largest view of an older generation any replica brings (its last reply's
-- spent): after a Redis restart, the most recently answered replica's view is everything that
-- was reported before, and the reports since are added on top, once.
local gen = redis.call('HGET', h, 'gen')
local floor = tonumber(redis.call('HGET', h, 'floor'))
if ARGV[12] ~= '' and ARGV[12] ~= gen then floor = math.max(floor, tonumber(ARGV[7])) end
local added = tonumber(redis.call('HGET', h, 'added')) + report
local spent = floor + added
local mine = nil
local others = 0
local live = 1
local all = redis.call('HGETALL', h)
for i = 1, #all, 2 do
  local f = all[i]
  if string.sub(f, 1, 2) == 'l:' then
    local v = all[i + 1]
    local sep = string.find(v, ':', 1, true)
    local amount = tonumber(string.sub(v, 1, sep - 1))
    local expiry = tonumber(string.sub(v, sep + 1))
    if f == field then
      mine = amount
    elseif expiry <= now then
      redis.call('HDEL', h, f)
    else
      others = others + amount
      live = live + 1
    end
  end
end
if mine == nil then mine = held end
mine = math.max(mine - report - give, 0)
local free = cap - spent - others - mine
if free < 0 then
  mine = math.max(mine + free, 0)
  free = math.max(cap - spent - others - mine, 0)
end
if ARGV[9] == 'refill' and not settling then
  local slice = math.max(math.floor(free / (4 * live)), need)
  local add = math.min(slice, free)
  mine = mine + add
  free = free - add
end
if mine > 0 then
  redis.call('HSET', h, field, string.format('%.0f:%.0f', mine, now + ttl))
else
  redis.call('HDEL', h, field)
end
redis.call('HSET', h, 'floor', string.format('%.0f', floor), 'added', string.format('%.0f', added))
redis.call('EXPIRE', h, ARGV[10])
if settling then free = -1 end
return {mine, spent, free, live, rebuilt, gen}
)lua";

}  // namespace turnpike::redis

namespace turnpike::redis {

const std::string_view kRateScript = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = 60000000
local interval = window / tonumber(ARGV[1])
local recent = tonumber(ARGV[4])
local settle = tonumber(ARGV[6]) * 1000
local gen = redis.call('HGET', KEYS[1], 'gen')
if not gen then
  gen = string.format('%.0f', now) .. '-' .. ARGV[7]
  redis.call('HSET', KEYS[1], 'tat', string.format('%.0f', now), 'gen', gen)
  if recent > 0 then redis.call('HSET', KEYS[1], 'rebuilt', string.format('%.0f', now)) end
end
local tat = math.max(tonumber(redis.call('HGET', KEYS[1], 'tat')), now)
if ARGV[5] ~= '' and ARGV[5] ~= gen then
  tat = math.min(tat + recent * interval, now + window)
end
local settled_at = tonumber(redis.call('HGET', KEYS[1], 'rebuilt') or '0') + settle
local give = tonumber(ARGV[3])
if give > 0 then tat = math.max(tat - give * interval, now) end
local want = tonumber(ARGV[2])
local room = math.floor((now + window - tat) / interval)
local granted = 0
if now >= settled_at then granted = math.max(math.min(want, room), 0) end
tat = tat + granted * interval
redis.call('HSET', KEYS[1], 'tat', string.format('%.0f', tat))
redis.call('PEXPIRE', KEYS[1], 2 * window / 1000)
local retry = 0
if granted < want then
  retry = math.max(math.ceil(tat + (want - granted) * interval - now - window), settled_at - now)
end
return {granted, room - granted, retry, gen}
)lua";

}  // namespace turnpike::redis
