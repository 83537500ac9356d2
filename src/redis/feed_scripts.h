// The Lua scripts of the Redis Cluster feed backend. Each runs atomically
// on the node that owns its keys, which all share one hash tag (one slot).
//
// Keys are compared with the shared `less` of lua_ordering.h, never with
// Lua's `<` on strings. Entry members are laid out as entry_codec.h
// describes.
#ifndef FEEDCORE_REDIS_FEED_SCRIPTS_H_
#define FEEDCORE_REDIS_FEED_SCRIPTS_H_

#include "redis/lua_ordering.h"
#include "redis/lua_relations.h"

namespace feedcore::redis {

// Puts one entry into timelines of one slot, in each replacing an entry
// with the same key, dropping the oldest beyond the cap, and extending the
// key's own expiry. KEYS: pairs of a timeline and its owner's following
// set, every key in one slot: a fan-out sends the timelines of a slot in
// one call, so the cost of a call is shared by all of them. ARGV: score,
// member, cap, key ttl in ms, an actor (8 bytes) or "", and now (8
// bytes). With an actor, the entry goes into a timeline only if its owner
// follows that actor and does not mute it (lua_relations.h), so a fan-out
// that raced an Unfollow or a Mute leaves nothing behind. Returns the sums
// over the timelines of {inserted, replaced, rejected_by_cap, trimmed,
// skipped}.
inline constexpr char kInsertScript[] =
    FEEDCORE_LUA_LESS FEEDCORE_LUA_RELATIONS R"lua(
-- A delivery costs Redis about a microsecond per call, so the common one
-- (a new key into a timeline below its cap) makes only O(1) calls:
-- ZSCORE, ZADD, ZCOUNT, ZCARD, PEXPIRE. Scans and trims run when needed.
local call = redis.call
local score, member, ttl, actor = ARGV[1], ARGV[2], ARGV[4], ARGV[5]
local key = string.sub(member, 1, 16)
local cap = tonumber(ARGV[3])
local inserted, replaced, rejected, trimmed, skipped = 0, 0, 0, 0, 0
-- Whether the owner of following set fg takes the actor's entries now: a
-- bare edge, or a parked one whose mute has expired.
local function takes(fg)
  if call('ZSCORE', fg, actor) then return true end
  local parked = parked_of(fg, actor)
  return parked ~= nil and not in_force(string.sub(parked, 10, 17), ARGV[6])
end
for i = 1, #KEYS, 2 do
  local tl = KEYS[i]
  if actor ~= '' and not takes(KEYS[i + 1]) then
    skipped = skipped + 1
  elseif call('ZADD', tl, score, member) == 0 then
    -- The same member was there: the entry replaces itself.
    replaced = replaced + 1
  else
    -- Another member with this key (other actor or expiry) is the entry
    -- being replaced; only members of the same score can have the key.
    local swapped = false
    if call('ZCOUNT', tl, score, score) > 1 then
      for _, m in ipairs(call('ZRANGE', tl, score, score, 'BYSCORE')) do
        if m ~= member and string.sub(m, 1, 16) == key then
          call('ZREM', tl, m)
          swapped = true
        end
      end
    end
    local n = call('ZCARD', tl)
    if swapped then
      replaced = replaced + 1
      call('PEXPIRE', tl, ttl, 'GT')
    elseif n > cap and call('ZRANK', tl, member) == 0 then
      -- Older than every entry of a full timeline: as if never put.
      call('ZREM', tl, member)
      rejected = rejected + 1
    else
      inserted = inserted + 1
      if n > cap then
        trimmed = trimmed + n - cap
        call('ZREMRANGEBYRANK', tl, 0, n - cap - 1)
      end
      -- A key this script created has no expiry yet; every other one got
      -- it here, so GT (only ever extend) is all the rest need: one call,
      -- not a PTTL and a PEXPIRE.
      if n == 1 then
        call('PEXPIRE', tl, ttl)
      else
        call('PEXPIRE', tl, ttl, 'GT')
      end
    end
  end
end
return {inserted, replaced, rejected, trimmed, skipped}
)lua";

// Up to ARGV[6] visible members of a feed with keys in [ARGV[4], ARGV[5]]
// (16-byte keys) and scores in [ARGV[2], ARGV[3]], newest first when
// ARGV[1] is "rev"; visible means an expiry above ARGV[7] (8 bytes, now).
// Expired members met on the way are removed.
inline constexpr char kReadScript[] = FEEDCORE_LUA_LESS R"lua(
local out = {}
local expired = {}
local want = tonumber(ARGV[6])
local offset = 0
local batch = want + 16
while #out < want do
  local chunk
  if ARGV[1] == 'rev' then
    chunk = redis.call('ZRANGE', KEYS[1], ARGV[3], ARGV[2], 'BYSCORE', 'REV',
                       'LIMIT', offset, batch)
  else
    chunk = redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[3], 'BYSCORE',
                       'LIMIT', offset, batch)
  end
  for _, m in ipairs(chunk) do
    local key = string.sub(m, 1, 16)
    if not less(key, ARGV[4]) and not less(ARGV[5], key) then
      if less(ARGV[7], string.sub(m, 25, 32)) then
        out[#out + 1] = m
        if #out == want then break end
      else
        expired[#expired + 1] = m
      end
    end
  end
  if #chunk < batch then break end
  offset = offset + batch
  batch = batch * 2
end
for _, m in ipairs(expired) do redis.call('ZREM', KEYS[1], m) end
return out
)lua";

// Removes the entry with key ARGV[2] (16 bytes) and score ARGV[1] from
// each feed of KEYS (one slot). Returns how many feeds had one.
inline constexpr char kRemoveScript[] = R"lua(
local removed = 0
for _, feed in ipairs(KEYS) do
  for _, m in ipairs(redis.call('ZRANGE', feed, ARGV[1], ARGV[1], 'BYSCORE')) do
    if string.sub(m, 1, 16) == ARGV[2] then
      redis.call('ZREM', feed, m)
      removed = removed + 1
      break
    end
  end
end
return removed
)lua";

// Stops following ARGV[1] (8 bytes; a bare or a parked edge) and stops
// merging it (hybrid_scripts.h), in one step. KEYS: timeline, following
// set, merged-followee hash, and with "keep" the relations. By default
// the followee's entries leave the timeline in the same step, so no
// fan-out can slip one in after. With ARGV[2] "keep" (at now ARGV[3], 8
// bytes) they stay, and the answer carries the key from which the reader
// merged the followee, unless it mutes it now: what the merge showed is
// to be copied. Returns {was_following, removed, merge boundary or ""}.
inline constexpr char kUnfollowScript[] =
    FEEDCORE_LUA_LESS FEEDCORE_LUA_RELATIONS R"lua(
local actor = ARGV[1]
if not drop_edge(KEYS[2], actor) then return {0, 0, ''} end
local from = redis.call('HGET', KEYS[3], actor)
redis.call('HDEL', KEYS[3], actor)
if ARGV[2] ~= 'keep' then return {1, purge_timeline(KEYS[1], actor), ''} end
local mute = from and mute_of(KEYS[4], actor)
if mute and in_force(string.sub(mute, 11, 18), ARGV[3]) then from = nil end
return {1, 0, from or ''}
)lua";

// Stores an activity once. KEYS: the activity's hash and its recipient
// set (notification_scripts.h), one slot. ARGV: actor, ts, payload,
// expires_at (decimal), key ttl in ms, then the users the publish notifies
// (decimal, distinct), recorded for Retract while the publish is "new" or
// "delivering" and kept as long as the activity. Returns {state,
// expires_at}: state "new" (stored now), "delivering" (stored by a publish
// that has not finished its fan-out), "delivered", "retracted" (also
// while its retract is still removing copies) or "conflict" (the id holds
// another activity: another actor or ts, or another payload unless the
// activity was edited); expires_at is the stored one, which every copy
// must carry. Only "new" and "delivering" change anything.
inline constexpr char kStoreActivityScript[] = R"lua(
local function record_recipients()
  if #ARGV < 6 then return end
  -- In slices: Lua unpacks at most a few thousand values at once.
  for i = 6, #ARGV, 1000 do
    redis.call('SADD', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
  redis.call('PEXPIRE', KEYS[2], redis.call('PTTL', KEYS[1]))
end
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  redis.call('HSET', KEYS[1], 'actor', ARGV[1], 'ts', ARGV[2],
             'payload', ARGV[3], 'expires', ARGV[4], 'state', 'delivering')
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  record_recipients()
  return {'new', ARGV[4]}
end
local f = redis.call('HMGET', KEYS[1], 'actor', 'ts', 'payload', 'expires',
                     'edited')
if state == 'retracted' or state == 'retracting' then
  return {'retracted', f[4]}
end
-- Once edited (edit_scripts.h), the payload is the edit's: a retried
-- publish of the activity still names it by actor and ts.
if f[1] ~= ARGV[1] or f[2] ~= ARGV[2] or (not f[5] and f[3] ~= ARGV[3]) then
  return {'conflict', f[4]}
end
if state == 'delivering' then record_recipients() end
return {state, f[4]}
)lua";

// Ends a publish: "delivering" becomes "delivered". Returns the state
// found, so a publish that raced a Retract learns it must clean up.
inline constexpr char kFinishPublishScript[] = R"lua(
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'delivering' then redis.call('HSET', KEYS[1], 'state', 'delivered') end
return state or 'missing'
)lua";

// Marks an activity "retracting" and drops its payload; the record stays
// (until it expires) so the id cannot be published again, and with it
// the counters (counter_scripts.h), which IncrementCounter and
// GetCounters refuse from now on and a ranked read of an entry under the
// id still uses, as in process. Returns
// {state found, actor, ts, expires_at}, state "missing" when there is none.
// Found "retracting", an earlier retract did not finish removing the
// copies; found "retracted", one did, and retracting again is a no-op.
inline constexpr char kRetractScript[] = R"lua(
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing', '0', '0', '0'} end
local f = redis.call('HMGET', KEYS[1], 'actor', 'ts', 'expires')
if state ~= 'retracted' and state ~= 'retracting' then
  redis.call('HSET', KEYS[1], 'state', 'retracting')
  redis.call('HDEL', KEYS[1], 'payload')
end
return {state, f[1], f[2], f[3]}
)lua";

// Ends a retract whose copies are all removed: "retracting" becomes
// "retracted".
inline constexpr char kFinishRetractScript[] = R"lua(
if redis.call('HGET', KEYS[1], 'state') == 'retracting' then
  redis.call('HSET', KEYS[1], 'state', 'retracted')
end
return 1
)lua";

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_FEED_SCRIPTS_H_
