// The Lua scripts of the Redis Cluster leaderboard (redis_leaderboard.cc
// says how a board lives in the cluster). Each runs atomically on the node
// of its one partition. Members are compared with the shared `less` of
// lua_ordering.h.
#ifndef FEEDCORE_REDIS_LEADERBOARD_SCRIPTS_H_
#define FEEDCORE_REDIS_LEADERBOARD_SCRIPTS_H_

#include "redis/lua_ordering.h"

namespace feedcore::redis {

// KEYS[1]: a partition. ARGV: mode, negated score, member, n_above,
// n_below. Mode 'key' locates (score, member); 'first' the position before
// every entry; 'last' the position after every entry. Returns {pos,
// present, member's stored score or nil, up to n_above entries just above
// the position, up to n_below entries just below it}, entries with scores
// in set order, where pos is the number of entries above the key and the
// key itself (when present) is in neither list.
inline constexpr char kLeaderboardReadScript[] = FEEDCORE_LUA_LESS R"lua(
local key, mode, s, m = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
local n_above, n_below = tonumber(ARGV[4]), tonumber(ARGV[5])
local pos, present, current = 0, 0, false
if mode == 'key' then
  local lo = redis.call('ZCOUNT', key, '-inf', '(' .. s)
  local hi = lo + redis.call('ZCOUNT', key, s, s)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if less(redis.call('ZRANGE', key, mid, mid)[1], m) then
      lo = mid + 1
    else
      hi = mid
    end
  end
  pos = lo
  current = redis.call('ZSCORE', key, m)
  if current and tonumber(current) == tonumber(s) then present = 1 end
elseif mode == 'last' then
  pos = redis.call('ZCARD', key)
end
local above, below = {}, {}
if n_above > 0 and pos > 0 then
  above = redis.call('ZRANGE', key, math.max(0, pos - n_above), pos - 1,
                     'WITHSCORES')
end
if n_below > 0 then
  local first = pos + present
  below = redis.call('ZRANGE', key, first, first + n_below - 1, 'WITHSCORES')
end
return {pos, present, current, above, below}
)lua";

// KEYS[1]: the member's partition. ARGV: member, delta = hi * 2^32 + lo
// with 0 <= lo < 2^32, factor (-1: the stored score is the negated score,
// on a higher-first board; 1: the score itself, on a lower-first board).
// Every intermediate value stays far below 2^53, so the sum is exact.
// Returns {'ok', new score}, {'range', old score} (out of +-2^53, nothing
// written) or {'bad', stored score} (not one this board writes).
inline constexpr char kLeaderboardIncrementScript[] = R"lua(
local B, LIMIT_HI = 4294967296, 2097152
local factor = tonumber(ARGV[4])
local stored = redis.call('ZSCORE', KEYS[1], ARGV[1])
local s = 0
if stored then
  s = factor * tonumber(stored)
  if s ~= math.floor(s) or s > LIMIT_HI * B or s < -LIMIT_HI * B then
    return {'bad', stored}
  end
end
local hi = math.floor(s / B)
local lo = s - hi * B + tonumber(ARGV[3])
hi = hi + tonumber(ARGV[2])
if lo >= B then
  lo = lo - B
  hi = hi + 1
end
if hi > LIMIT_HI or (hi == LIMIT_HI and lo > 0) or hi < -LIMIT_HI then
  return {'range', string.format('%.0f', s)}
end
local n = hi * B + lo
local stored_n = '0'
if n ~= 0 then stored_n = string.format('%.0f', factor * n) end
redis.call('ZADD', KEYS[1], stored_n, ARGV[1])
return {'ok', string.format('%.0f', n)}
)lua";

// A conditional write (Leaderboard::Write), atomic on the member's node.
// KEYS[1]: the member's partition, KEYS[2]: its metadata hash. ARGV:
// member, factor (as for the increment script), op ('set' or 'incr'),
// value = hi * 2^32 + lo with 0 <= lo < 2^32 (the score or the delta),
// condition ('always', 'absent', 'present', 'better', 'worse',
// 'present_better', 'present_worse'), metadata action ('keep', 'set',
// 'del'), metadata bytes. Conditions on presence alone are decided before
// the arithmetic, the others on the score after it; "better" is on the
// board's scores, so the sign of the stored score never matters. Returns
// {outcome, score after or nil} with outcome 'added', 'changed',
// 'unchanged' or 'not'; {'range', old score} when the result leaves
// +-2^53 (nothing written); {'bad', stored score}.
inline constexpr char kLeaderboardWriteScript[] = R"lua(
local B, LIMIT_HI = 4294967296, 2097152
local key, metadata = KEYS[1], KEYS[2]
local member, factor, op = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local hi, lo, condition = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local function text(x)
  if x == 0 then return '0' end
  return string.format('%.0f', x)
end
local stored = redis.call('ZSCORE', key, member)
local s = 0
if stored then
  s = factor * tonumber(stored)
  if s ~= math.floor(s) or s > LIMIT_HI * B or s < -LIMIT_HI * B then
    return {'bad', stored}
  end
  if condition == 'absent' then return {'not', text(s)} end
elseif condition == 'present' or condition == 'present_better' or
       condition == 'present_worse' then
  return {'not', false}
end
if op == 'incr' then
  local s_hi = math.floor(s / B)
  lo = s - s_hi * B + lo
  hi = s_hi + hi
  if lo >= B then
    lo = lo - B
    hi = hi + 1
  end
end
if hi > LIMIT_HI or (hi == LIMIT_HI and lo > 0) or hi < -LIMIT_HI then
  return {'range', text(s)}
end
local n = hi * B + lo
local outcome = 'added'
if stored then
  local better, worse = n > s, n < s
  if factor > 0 then better, worse = n < s, n > s end
  if ((condition == 'better' or condition == 'present_better') and
      not better) or
     ((condition == 'worse' or condition == 'present_worse') and
      not worse) then
    return {'not', text(s)}
  end
  outcome = 'changed'
  if n == s then outcome = 'unchanged' end
end
if outcome ~= 'unchanged' then
  redis.call('ZADD', key, text(factor * n), member)
end
if ARGV[7] == 'set' then
  redis.call('HSET', metadata, member, ARGV[8])
elseif ARGV[7] == 'del' then
  redis.call('HDEL', metadata, member)
end
return {outcome, text(n)}
)lua";

// KEYS[1]: a partition, KEYS[2]: its metadata hash. ARGV: member. Removes
// the member and its metadata together; returns 1 if it was there, else 0.
inline constexpr char kLeaderboardRemoveScript[] = R"lua(
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return removed
)lua";

// KEYS[1]: a partition, KEYS[2]: its metadata hash. ARGV: member, action
// ('get', 'set', 'del'), bytes. Only for a member on the board: returns
// {0} when it is absent (nothing written), {1, metadata or ''} for 'get',
// {1} otherwise.
inline constexpr char kLeaderboardMetadataScript[] = R"lua(
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {0} end
if ARGV[2] == 'get' then
  return {1, redis.call('HGET', KEYS[2], ARGV[1]) or ''}
elseif ARGV[2] == 'set' then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
else
  redis.call('HDEL', KEYS[2], ARGV[1])
end
return {1}
)lua";

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_LEADERBOARD_SCRIPTS_H_
