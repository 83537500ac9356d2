// The Lua scripts of the Redis Cluster backend's notification feeds.
//
// A user's notification feed is two keys in the user's slot: a sorted set
// of entry members ({user}:nt, laid out as entry_codec.h says, score ts)
// and a hash of its groups ({user}:ng). A group's field is its group key
// (the member's last 8 bytes), or for group key 0, "k" and the member's
// 16-byte key (a group of its own); its value is 3 x (entries in the
// group) + flag, flag 0 unseen, 1 seen, 2 read. So the hash holds exactly
// the groups the set holds, with their flags, and a group whose last entry
// leaves takes its flags with it, as in process. Both keys get the same
// expiry, extended by every notification.
//
// Every call but a notify first reclaims the feed's expired members, as
// reading an expired Redis key deletes it, so the counts answered are the
// visible ones. The hash's field "x" (no group's field has its length)
// holds an expiry at or before the soonest of the feed's members, so a
// call where nothing has expired skips the scan of the set
// (O(max_length)): a notify lowers it, a scan sets it exactly, and the
// removals in between only leave it early, which costs a scan, never a
// missed expiry.
#ifndef FEEDCORE_REDIS_NOTIFICATION_SCRIPTS_H_
#define FEEDCORE_REDIS_NOTIFICATION_SCRIPTS_H_

#include "redis/lua_ordering.h"
#include "redis/lua_relations.h"

namespace feedcore::redis {

// Functions every notification script starts with.
#define FEEDCORE_LUA_NOTIFICATION_GROUPS                              \
  FEEDCORE_LUA_LESS                                                   \
  "local UNGROUPED = string.rep('\\0', 8)\n"                          \
  "local function group_of(m)\n"                                      \
  "  local g = string.sub(m, 33, 40)\n"                               \
  "  if g == UNGROUPED then return 'k' .. string.sub(m, 1, 16) end\n" \
  "  return g\n"                                                      \
  "end\n"                                                             \
  "local function leave(groups, m)\n"                                 \
  "  local g = group_of(m)\n"                                         \
  "  local v = tonumber(redis.call('HGET', groups, g) or '0')\n"      \
  "  if v < 6 then redis.call('HDEL', groups, g)\n"                   \
  "  else redis.call('HSET', groups, g, v - 3) end\n"                 \
  "end\n"                                                             \
  "local function reclaim(feed, groups, now)\n"                       \
  "  local soonest = redis.call('HGET', groups, 'x')\n"               \
  "  if not soonest or less(now, soonest) then return end\n"          \
  "  local expired, kept = {}, nil\n"                                 \
  "  for _, m in ipairs(redis.call('ZRANGE', feed, 0, -1)) do\n"      \
  "    local e = string.sub(m, 25, 32)\n"                             \
  "    if not less(now, e) then\n"                                    \
  "      expired[#expired + 1] = m\n"                                 \
  "    elseif not kept or less(e, kept) then\n"                       \
  "      kept = e\n"                                                  \
  "    end\n"                                                         \
  "  end\n"                                                           \
  "  for _, m in ipairs(expired) do\n"                                \
  "    redis.call('ZREM', feed, m)\n"                                 \
  "    leave(groups, m)\n"                                            \
  "  end\n"                                                           \
  "  if kept then redis.call('HSET', groups, 'x', kept)\n"            \
  "  else redis.call('DEL', groups) end\n"                            \
  "end\n"                                                             \
  "local function drop_actor(feed, groups, actor)\n"                  \
  "  local removed = 0\n"                                             \
  "  for _, m in ipairs(redis.call('ZRANGE', feed, 0, -1)) do\n"      \
  "    if string.sub(m, 17, 24) == actor then\n"                      \
  "      redis.call('ZREM', feed, m)\n"                               \
  "      leave(groups, m)\n"                                          \
  "      removed = removed + 1\n"                                     \
  "    end\n"                                                         \
  "  end\n"                                                           \
  "  if removed > 0 and redis.call('EXISTS', feed) == 0 then\n"       \
  "    redis.call('DEL', groups)\n"                                   \
  "  end\n"                                                           \
  "  return removed\n"                                                \
  "end\n"                                                             \
  "local function counts(groups)\n"                                   \
  "  local unseen, unread, n = 0, 0, 0\n"                             \
  "  local all = redis.call('HGETALL', groups)\n"                     \
  "  for i = 1, #all, 2 do\n"                                         \
  "    if all[i] ~= 'x' then\n"                                       \
  "      local flag = tonumber(all[i + 1]) % 3\n"                     \
  "      n = n + 1\n"                                                 \
  "      if flag == 0 then unseen = unseen + 1 end\n"                 \
  "      if flag < 2 then unread = unread + 1 end\n"                  \
  "    end\n"                                                         \
  "  end\n"                                                           \
  "  return {unseen, unread, n}\n"                                    \
  "end\n"

// Delivers one notification to the feeds of one slot. KEYS: triples of a
// feed, its groups hash and its owner's relations (lua_relations.h). ARGV:
// score, member, cap, key ttl in ms, now (8 bytes) or "", and now (8
// bytes). An owner who blocks the member's actor, or mutes it with
// notifications, gets nothing. A feed that already holds the member's key
// (a publish that is retried) is left as it is; a full feed whose members
// are all newer rejects it, changing nothing, as in process. Returns, per
// feed, 1 if its owner takes the actor's notifications (0 if hidden),
// followed by {unseen, unread, groups} when ARGV[5] is now: each feed's
// counts after reclaiming what expired.
inline constexpr char kNotifyScript[] =
    FEEDCORE_LUA_NOTIFICATION_GROUPS FEEDCORE_LUA_RELATIONS R"lua(
local score, member, ttl, now = ARGV[1], ARGV[2], ARGV[4], ARGV[5]
local key = string.sub(member, 1, 16)
local actor = string.sub(member, 17, 24)
local cap = tonumber(ARGV[3])
local function hides(rl)
  if redis.call('EXISTS', rl) == 0 then return false end
  if redis.call('ZSCORE', rl, 'b' .. actor) then return true end
  local mute = mute_of(rl, actor)
  return mute ~= nil and string.sub(mute, 10, 10) == '1' and
         in_force(string.sub(mute, 11, 18), ARGV[6])
end
local function deliver(feed, groups)
  for _, m in ipairs(redis.call('ZRANGE', feed, score, score, 'BYSCORE')) do
    if string.sub(m, 1, 16) == key then return end
  end
  local n = redis.call('ZCARD', feed)
  if n >= cap and
     less(key, string.sub(redis.call('ZRANGE', feed, 0, 0)[1], 1, 16)) then
    return
  end
  redis.call('ZADD', feed, score, member)
  local expiry = string.sub(member, 25, 32)
  local soonest = redis.call('HGET', groups, 'x')
  if not soonest or less(expiry, soonest) then
    redis.call('HSET', groups, 'x', expiry)
  end
  local g = group_of(member)
  local v = tonumber(redis.call('HGET', groups, g) or '0')
  -- One more entry, and the group is unseen and unread again.
  redis.call('HSET', groups, g, (math.floor(v / 3) + 1) * 3)
  n = n + 1
  while n > cap do
    leave(groups, redis.call('ZPOPMIN', feed)[1])
    n = n - 1
  end
  if n == 1 then
    redis.call('PEXPIRE', feed, ttl)
    redis.call('PEXPIRE', groups, ttl)
  else
    redis.call('PEXPIRE', feed, ttl, 'GT')
    redis.call('PEXPIRE', groups, ttl, 'GT')
  end
end
local out = {}
for i = 1, #KEYS, 3 do
  local feed, groups = KEYS[i], KEYS[i + 1]
  local takes = not hides(KEYS[i + 2])
  if takes then deliver(feed, groups) end
  out[#out + 1] = takes and 1 or 0
  if now ~= '' then
    reclaim(feed, groups, now)
    for _, c in ipairs(counts(groups)) do out[#out + 1] = c end
  end
end
return out
)lua";

// Removes the entry with key ARGV[2] (16 bytes) and score ARGV[1] from the
// feeds of one slot (KEYS: pairs of a feed and its groups hash), each
// taking its group's share with it. Returns how many feeds had one.
inline constexpr char kUnnotifyScript[] =
    FEEDCORE_LUA_NOTIFICATION_GROUPS R"lua(
local removed = 0
for i = 1, #KEYS, 2 do
  for _, m in ipairs(redis.call('ZRANGE', KEYS[i], ARGV[1], ARGV[1],
                                'BYSCORE')) do
    if string.sub(m, 1, 16) == ARGV[2] then
      redis.call('ZREM', KEYS[i], m)
      leave(KEYS[i + 1], m)
      if redis.call('EXISTS', KEYS[i]) == 0 then redis.call('DEL', KEYS[i + 1]) end
      removed = removed + 1
      break
    end
  end
end
return removed
)lua";

// Reads a notification feed after reclaiming what expired. KEYS: feed,
// groups hash. ARGV: now (8 bytes). Returns {members newest first, the
// groups hash as field, value, field, value...}.
inline constexpr char kReadNotificationsScript[] =
    FEEDCORE_LUA_NOTIFICATION_GROUPS R"lua(
reclaim(KEYS[1], KEYS[2], ARGV[1])
return {redis.call('ZRANGE', KEYS[1], 0, -1, 'REV'),
        redis.call('HGETALL', KEYS[2])}
)lua";

// Marks a notification feed after reclaiming what expired. KEYS: feed,
// groups hash. ARGV: now (8 bytes), what: "counts" (nothing, for the
// counts), "seen" (every group), "read" (every group), or "one" with the
// score and 16-byte key of an entry whose group is marked read. Returns
// {unseen, unread, groups}, or {} for "one" when no visible entry has
// that key.
inline constexpr char kMarkNotificationsScript[] =
    FEEDCORE_LUA_NOTIFICATION_GROUPS R"lua(
local feed, groups, what = KEYS[1], KEYS[2], ARGV[2]
reclaim(feed, groups, ARGV[1])
if what == 'one' then
  local found = nil
  for _, m in ipairs(redis.call('ZRANGE', feed, ARGV[3], ARGV[3], 'BYSCORE')) do
    if string.sub(m, 1, 16) == ARGV[4] then found = m end
  end
  if not found then return {} end
  local g = group_of(found)
  local v = tonumber(redis.call('HGET', groups, g))
  redis.call('HSET', groups, g, v - v % 3 + 2)
elseif what ~= 'counts' then
  local all = redis.call('HGETALL', groups)
  for i = 1, #all, 2 do
    local v = tonumber(all[i + 1])
    local flag = all[i] ~= 'x' and v % 3
    if what == 'read' and flag and flag < 2 then
      redis.call('HSET', groups, all[i], v - flag + 2)
    elseif what == 'seen' and flag == 0 then
      redis.call('HSET', groups, all[i], v + 1)
    end
  end
end
return counts(groups)
)lua";

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_NOTIFICATION_SCRIPTS_H_
