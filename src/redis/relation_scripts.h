// The Lua scripts of mute and block on the Redis Cluster feed backend. The
// keys (a user's relations `P:{u}:rl`, parked follow edges) are described
// in lua_relations.h, the design in docs/scale-out.md ("Mute and block").
// Each script changes one user's side in the user's slot, together with
// what the insert and notify scripts check there, so no fan-out or
// notification in flight can slip an entry in after the script's purge:
// the Unfollow ordering.
#ifndef FEEDCORE_REDIS_RELATION_SCRIPTS_H_
#define FEEDCORE_REDIS_RELATION_SCRIPTS_H_

#include "redis/lua_ordering.h"
#include "redis/lua_relations.h"
#include "redis/notification_scripts.h"

namespace feedcore::redis {

// Follow's second step: adds followee ARGV[1] (8 bytes) to the following
// set KEYS[1] of a follower whose relations are KEYS[2], parked if the
// follower mutes it. Returns 1 (added), 0 (already there) or -1 (refused:
// one of the two blocks the other).
inline constexpr char kFollowEdgeScript[] =
    FEEDCORE_LUA_LESS FEEDCORE_LUA_RELATIONS R"lua(
local fg, rl, f = KEYS[1], KEYS[2], ARGV[1]
if redis.call('ZSCORE', fg, f) then return 0 end
-- Most users hide nobody: one EXISTS settles it.
if redis.call('EXISTS', rl) == 0 then
  redis.call('ZADD', fg, 0, f)
  return 1
end
if redis.call('ZSCORE', rl, 'b' .. f) or redis.call('ZSCORE', rl, 'B' .. f) then
  return -1
end
if parked_of(fg, f) then return 0 end
local mute = mute_of(rl, f)
redis.call('ZADD', fg, 0, mute and f .. 'm' .. string.sub(mute, 11, 18) or f)
return 1
)lua";

// The blocker's side of Block: records that it blocks ARGV[1] (8 bytes),
// ends its follow edge to it (and the merge of it) and removes the
// actor's entries from its timeline and notification feed. KEYS:
// relations, following set, merged-followee hash, timeline, notification
// feed, its groups hash. Returns {blocked now (0: already), was following,
// entries removed}; blocking again changes nothing.
inline constexpr char kBlockScript[] =
    FEEDCORE_LUA_NOTIFICATION_GROUPS FEEDCORE_LUA_RELATIONS R"lua(
local actor = ARGV[1]
if redis.call('ZADD', KEYS[1], 0, 'b' .. actor) == 0 then return {0, 0, 0} end
local was = drop_edge(KEYS[2], actor) and 1 or 0
redis.call('HDEL', KEYS[3], actor)
return {1, was, purge_timeline(KEYS[4], actor) +
                drop_actor(KEYS[5], KEYS[6], actor)}
)lua";

// Mutes ARGV[1] (8 bytes) with flag ARGV[2] ('1': notifications too) until
// ARGV[3] (8 bytes, zero: none), at now ARGV[4] (8 bytes): records the
// mute, parks the follow edge and removes the actor's entries from the
// timeline (and with the flag, the notification feed). KEYS: relations,
// following set, timeline, notification feed, its groups hash. Returns
// {changed, entries removed}; the same mute again while in force changes
// nothing.
inline constexpr char kMuteScript[] =
    FEEDCORE_LUA_NOTIFICATION_GROUPS FEEDCORE_LUA_RELATIONS R"lua(
local actor, flag, expiry, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local mute = 'm' .. actor .. flag .. expiry
local old = mute_of(KEYS[1], actor)
if old == mute and in_force(expiry, now) then return {0, 0} end
if old then redis.call('ZREM', KEYS[1], old) end
redis.call('ZADD', KEYS[1], 0, mute)
if drop_edge(KEYS[2], actor) then
  redis.call('ZADD', KEYS[2], 0, actor .. 'm' .. expiry)
end
local removed = purge_timeline(KEYS[3], actor)
if flag == '1' then removed = removed + drop_actor(KEYS[4], KEYS[5], actor) end
return {1, removed}
)lua";

// Lifts the mute of ARGV[1] (8 bytes) at now ARGV[2] (8 bytes), unparking
// the follow edge. KEYS: relations, following set, merged-followee hash.
// Returns {was in force, follows, merges}; {0, 0, 0} when there was no
// mute (an expired one is dropped all the same).
inline constexpr char kUnmuteScript[] =
    FEEDCORE_LUA_LESS FEEDCORE_LUA_RELATIONS R"lua(
local actor = ARGV[1]
local old = mute_of(KEYS[1], actor)
if not old then return {0, 0, 0} end
redis.call('ZREM', KEYS[1], old)
local follows = 0
if drop_edge(KEYS[2], actor) then
  redis.call('ZADD', KEYS[2], 0, actor)
  follows = 1
end
return {in_force(string.sub(old, 11, 18), ARGV[2]) and 1 or 0, follows,
        redis.call('HEXISTS', KEYS[3], actor)}
)lua";

// The actors a reader merges (hybrid_scripts.h) but those it mutes at now
// ARGV[1] (8 bytes). KEYS: merged-followee hash, relations. Returns the
// hash's fields and values, as HGETALL.
inline constexpr char kMergedFolloweesScript[] =
    FEEDCORE_LUA_LESS FEEDCORE_LUA_RELATIONS R"lua(
local all = redis.call('HGETALL', KEYS[1])
if #all == 0 or redis.call('EXISTS', KEYS[2]) == 0 then return all end
local shown = {}
for i = 1, #all, 2 do
  local mute = mute_of(KEYS[2], all[i])
  if not (mute and in_force(string.sub(mute, 11, 18), ARGV[1])) then
    shown[#shown + 1] = all[i]
    shown[#shown + 1] = all[i + 1]
  end
end
return shown
)lua";

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_RELATION_SCRIPTS_H_
