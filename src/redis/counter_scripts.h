// The Lua scripts of the Redis Cluster feed backend's activity counters
// (FeedEngine::IncrementCounter). The counters are fields of the
// activity's hash (feed_scripts.h): `c0`..`c3`, decimal int64s, absent
// while 0; `cv`, the number of changes so far; `cat`, the engine clock's
// time of the last change, or "p" and that change's number while the
// change is not dated yet. They stay after a Retract, with the record.
#ifndef FEEDCORE_REDIS_COUNTER_SCRIPTS_H_
#define FEEDCORE_REDIS_COUNTER_SCRIPTS_H_

namespace feedcore::redis {

// Adds ARGV[2] (decimal) to field ARGV[1] of the activity KEYS[1] if it is
// stored, not retracted and expires after ARGV[3] (decimal, now), and
// marks the change undated. Returns {"ok", change number, c0, c1, c2,
// c3}, {"overflow", the counter's value} (nothing changed), or
// {"missing"}, {"retracted"}, {"expired"}. The expiry is compared as Lua
// numbers (doubles), exact while times stay below 2^53 microseconds.
inline constexpr char kIncrementCounterScript[] = R"lua(
local f = redis.call('HMGET', KEYS[1], 'state', 'expires')
if not f[1] then return {'missing'} end
if f[1] == 'retracting' or f[1] == 'retracted' then return {'retracted'} end
if tonumber(f[2]) <= tonumber(ARGV[3]) then return {'expired'} end
-- HINCRBY refuses a sum beyond int64 and then changes nothing.
local r = redis.pcall('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
if type(r) == 'table' and r.err then
  return {'overflow', redis.call('HGET', KEYS[1], ARGV[1]) or '0'}
end
local v = redis.call('HINCRBY', KEYS[1], 'cv', 1)
redis.call('HSET', KEYS[1], 'cat', 'p' .. v)
local c = redis.call('HMGET', KEYS[1], 'c0', 'c1', 'c2', 'c3')
return {'ok', tostring(v), c[1] or '0', c[2] or '0', c[3] or '0', c[4] or '0'}
)lua";

// Dates change ARGV[1] of the activity KEYS[1] with ARGV[2] (the engine
// clock read after the change was applied), unless a later change (or
// the key's expiry) came first: that one is dated by its own caller.
// Returns 1 when it dated the change.
inline constexpr char kDateCountersScript[] = R"lua(
if redis.call('HGET', KEYS[1], 'cat') ~= 'p' .. ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'cat', ARGV[2])
return 1
)lua";

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_COUNTER_SCRIPTS_H_
