// The Lua scripts of the Redis Cluster leaderboard (redis_leaderboard.cc
// says how a board lives in the cluster). Each runs atomically on the node
// of its one partition. Members are compared with the shared `less` of
// lua_ordering.h.
//
// A board ordered TieBreak::kEarlierUpdateFirst passes each script one more
// key, last: the partition's sequence hash (member -> 8-byte update
// sequence), in the slot of its sorted set. Its set members are then the
// sequence's 8 bytes followed by the member's (leaderboard_codec.h), and
// `find` and `store` below go through the hash. Without that key, a set
// member is the member's 8 bytes.
#ifndef FEEDCORE_REDIS_LEADERBOARD_SCRIPTS_H_
#define FEEDCORE_REDIS_LEADERBOARD_SCRIPTS_H_

#include "redis/lua_ordering.h"

// find(key, seqs, member): the member's set member and stored score, or
// nil and false when it is absent. seqs is the sequence hash or nil.
// store(key, seqs, member, old, ticket, stored): the member's score changed
// (or it is added) to the stored score `stored` (text); `old` is its set
// member or nil, `ticket` the write's update sequence (8 bytes). The
// member takes the ticket, or keeps its own sequence when that is later (a
// write numbered before another that reached the node first, or a retry):
// a member's sequence never goes back.
#define FEEDCORE_LUA_LB_ENTRY                                      \
  FEEDCORE_LUA_LESS                                                \
  "local function find(key, seqs, member)\n"                       \
  "  if not seqs then\n"                                           \
  "    return member, redis.call('ZSCORE', key, member)\n"         \
  "  end\n"                                                        \
  "  local q = redis.call('HGET', seqs, member)\n"                 \
  "  if not q then return nil, false end\n"                        \
  "  return q .. member, redis.call('ZSCORE', key, q .. member)\n" \
  "end\n"                                                          \
  "local function store(key, seqs, member, old, ticket, stored)\n" \
  "  if not seqs then\n"                                           \
  "    redis.call('ZADD', key, stored, member)\n"                  \
  "    return\n"                                                   \
  "  end\n"                                                        \
  "  local q = ticket\n"                                           \
  "  if old then\n"                                                \
  "    local current = string.sub(old, 1, 8)\n"                    \
  "    if less(q, current) then q = current end\n"                 \
  "    if q ~= current then redis.call('ZREM', key, old) end\n"    \
  "  end\n"                                                        \
  "  redis.call('ZADD', key, stored, q .. member)\n"               \
  "  redis.call('HSET', seqs, member, q)\n"                        \
  "end\n"

namespace feedcore::redis {

// KEYS[1]: a partition (KEYS[2]: its sequence hash). ARGV: mode, stored
// score, set member, n_above, n_below. Mode 'key' locates (score, member);
// 'first' the position before every entry; 'last' the position after every
// entry. Returns {pos, present, member's stored score or nil, up to n_above
// entries just above the position, up to n_below entries just below it},
// entries with scores in set order, where pos is the number of entries above
// the key and the key itself (when present) is in neither list.
inline constexpr char kLeaderboardReadScript[] = FEEDCORE_LUA_LB_ENTRY R"lua(
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
  local found = m
  if KEYS[2] then
    found, current = find(key, KEYS[2], string.sub(m, 9))
  else
    current = redis.call('ZSCORE', key, m)
  end
  if current and found == m and tonumber(current) == tonumber(s) then
    present = 1
  end
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

// KEYS[1]: the member's partition (KEYS[2]: its sequence hash). ARGV:
// member, delta = hi * 2^32 + lo with 0 <= lo < 2^32, factor (-1: the
// stored score is the negated score, on a higher-first board; 1: the
// score itself, on a lower-first board), the write's update sequence
// (with a sequence hash). An increment by 0 of a present member changes
// nothing, so it keeps its place among equal scores.
// Every intermediate value stays far below 2^53, so the sum is exact.
// Returns {'ok', new score}, {'range', old score} (out of +-2^53, nothing
// written) or {'bad', stored score} (not one this board writes).
inline constexpr char kLeaderboardIncrementScript[] =
    FEEDCORE_LUA_LB_ENTRY R"lua(
local B, LIMIT_HI = 4294967296, 2097152
local factor = tonumber(ARGV[4])
local old, stored = find(KEYS[1], KEYS[2], ARGV[1])
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
if not stored or n ~= s then
  store(KEYS[1], KEYS[2], ARGV[1], old, ARGV[5], stored_n)
end
return {'ok', string.format('%.0f', n)}
)lua";

// A conditional write (Leaderboard::Write), atomic on the member's node.
// KEYS[1]: the member's partition, KEYS[2]: its metadata hash (KEYS[3]: its
// sequence hash). ARGV: member, factor (as for the increment script), op
// ('set' or 'incr'), value = hi * 2^32 + lo with 0 <= lo < 2^32 (the score
// or the delta), condition ('always', 'absent', 'present', 'better',
// 'worse', 'present_better', 'present_worse'), metadata action ('keep',
// 'set', 'del'), metadata bytes, the write's update sequence (with a
// sequence hash). Only a write that changes the score (or adds the member)
// touches its sequence. Conditions on presence alone are decided before
// the arithmetic, the others on the score after it; "better" is on the
// board's scores, so the sign of the stored score never matters. Returns
// {outcome, score after or nil} with outcome 'added', 'changed',
// 'unchanged' or 'not'; {'range', old score} when the result leaves
// +-2^53 (nothing written); {'bad', stored score}.
inline constexpr char kLeaderboardWriteScript[] = FEEDCORE_LUA_LB_ENTRY R"lua(
local B, LIMIT_HI = 4294967296, 2097152
local key, metadata = KEYS[1], KEYS[2]
local member, factor, op = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local hi, lo, condition = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local function text(x)
  if x == 0 then return '0' end
  return string.format('%.0f', x)
end
local old, stored = find(key, KEYS[3], member)
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
  store(key, KEYS[3], member, old, ARGV[9], text(factor * n))
end
if ARGV[7] == 'set' then
  redis.call('HSET', metadata, member, ARGV[8])
elseif ARGV[7] == 'del' then
  redis.call('HDEL', metadata, member)
end
return {outcome, text(n)}
)lua";

// KEYS[1]: a partition, KEYS[2]: its metadata hash (KEYS[3]: its sequence
// hash). ARGV: member. Removes the member, its metadata and its sequence
// together; returns 1 if it was there, else 0.
inline constexpr char kLeaderboardRemoveScript[] = FEEDCORE_LUA_LB_ENTRY R"lua(
local old = find(KEYS[1], KEYS[3], ARGV[1])
local removed = 0
if old then removed = redis.call('ZREM', KEYS[1], old) end
redis.call('HDEL', KEYS[2], ARGV[1])
if KEYS[3] then redis.call('HDEL', KEYS[3], ARGV[1]) end
return removed
)lua";

// KEYS[1]: a partition, KEYS[2]: its metadata hash (KEYS[3]: its sequence
// hash). ARGV: member, action ('get', 'set', 'del'), bytes. Only for a member
// on the board: returns {0} when it is absent (nothing written), {1, metadata
// or ''} for 'get', {1} otherwise.
inline constexpr char kLeaderboardMetadataScript[] =
    FEEDCORE_LUA_LB_ENTRY R"lua(
local _, stored = find(KEYS[1], KEYS[3], ARGV[1])
if not stored then return {0} end
if ARGV[2] == 'get' then
  return {1, redis.call('HGET', KEYS[2], ARGV[1]) or ''}
elseif ARGV[2] == 'set' then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
else
  redis.call('HDEL', KEYS[2], ARGV[1])
end
return {1}
)lua";

// KEYS[1]: a partition, KEYS[2]: its sequence hash. ARGV: members. The
// sorted-set lookup of a board ordered by update: for each member, its
// update sequence and stored score, or false and false when it is absent.
inline constexpr char kLeaderboardLookupScript[] = R"lua(
local out = {}
for i = 1, #ARGV do
  local q = redis.call('HGET', KEYS[2], ARGV[i])
  local score = false
  if q then score = redis.call('ZSCORE', KEYS[1], q .. ARGV[i]) end
  out[2 * i - 1] = q or false
  out[2 * i] = score or false
end
return out
)lua";

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_LEADERBOARD_SCRIPTS_H_
