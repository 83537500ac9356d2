// The Lua scripts of hybrid fan-out on the Redis Cluster feed backend
// (EngineOptions::hybrid_fanout_threshold; docs/scale-out.md, "Hybrid
// fan-out"). An actor's fan-out state is a hash in its slot, `P:{a}:fo`:
// `np`, the 16-byte key of the newest entry it published; `mode`, absent
// while its publishes are copied, "becoming" while its followers are told
// to merge it, "merged" once they all have; and while "becoming", `lease`,
// the engine-clock time (8 bytes big-endian) until which the Follow that
// walks the followers holds the walk. A reader's merged
// followees are a hash in its slot, `P:{r}:hf`: actor (8 bytes) -> the
// 16-byte key from which the reader merges that actor's own feed.
#ifndef FEEDCORE_REDIS_HYBRID_SCRIPTS_H_
#define FEEDCORE_REDIS_HYBRID_SCRIPTS_H_

#include "redis/lua_ordering.h"
#include "redis/lua_relations.h"

namespace feedcore::redis {

// A publish notes its entry's key ARGV[1] in the actor's state KEYS[1].
// Returns {mode or "", the newest key before it or ""}: the publish copies
// unless the mode is "merged", and then only when its key is older than
// the newest before it (an out-of-order timestamp, which a follower's merge
// may start above).
inline constexpr char kNotePublishScript[] = FEEDCORE_LUA_LESS R"lua(
local newest = redis.call('HGET', KEYS[1], 'np')
if not newest or less(newest, ARGV[1]) then
  redis.call('HSET', KEYS[1], 'np', ARGV[1])
end
return {redis.call('HGET', KEYS[1], 'mode') or '', newest or ''}
)lua";

// Follow's first step with hybrid fan-out on: adds follower ARGV[1] to the
// followee's follower set KEYS[1] and, when that takes a copied actor past
// ARGV[2] followers, marks it "becoming" in its state KEYS[2], leased
// until ARGV[4] (8 bytes). ARGV[3] is now (8 bytes): a "becoming" actor
// whose lease has run out (its walker stopped, say a client that died
// mid-walk) is leased again to this call, which takes the walk over.
// Returns {added (0 or 1), mode, newest key or ""}; mode is "start" when
// this call holds the walk, else the mode found ("" for copied).
inline constexpr char kAddFollowerScript[] = FEEDCORE_LUA_LESS R"lua(
local added = redis.call('ZADD', KEYS[1], 0, ARGV[1])
local mode = redis.call('HGET', KEYS[2], 'mode')
local newest = redis.call('HGET', KEYS[2], 'np') or ''
if not mode and added == 1 and
   redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[2], 'mode', 'becoming', 'lease', ARGV[4])
  return {added, 'start', newest}
end
if mode == 'becoming' then
  local lease = redis.call('HGET', KEYS[2], 'lease')
  if not lease or not less(ARGV[3], lease) then
    redis.call('HSET', KEYS[2], 'lease', ARGV[4])
    return {added, 'start', newest}
  end
end
return {added, mode or '', newest}
)lua";

// Makes readers merge actor ARGV[1] from key ARGV[2]. KEYS: pairs of a
// reader's following set and its merged-followee hash, one slot; a reader
// that does not follow the actor (any more) is skipped, one that mutes it
// is not (its reads skip the actor while the mute is in force). ARGV[3]
// "keep" leaves a boundary already set alone. Returns how many readers
// merge it now.
inline constexpr char kMergeFolloweeScript[] =
    FEEDCORE_LUA_LESS FEEDCORE_LUA_RELATIONS R"lua(
local merging = 0
for i = 1, #KEYS, 2 do
  if redis.call('ZSCORE', KEYS[i], ARGV[1]) or parked_of(KEYS[i], ARGV[1]) then
    if ARGV[3] == 'keep' then
      redis.call('HSETNX', KEYS[i + 1], ARGV[1], ARGV[2])
    else
      redis.call('HSET', KEYS[i + 1], ARGV[1], ARGV[2])
    end
    merging = merging + 1
  end
end
return merging
)lua";

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_HYBRID_SCRIPTS_H_
