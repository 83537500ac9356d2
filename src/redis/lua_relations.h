// Lua functions the Redis backend's scripts share to honour mutes and
// blocks (docs/scale-out.md, "Mute and block"). A user's relations are one
// sorted set in its slot, `P:{u}:rl`, every member of score 0 so that they
// sort by their bytes:
//   'b' + actor (8 bytes): the user blocks the actor;
//   'B' + actor: the actor blocks the user (so a Follow, which runs in the
//     follower's slot, sees a block of either direction there);
//   'm' + actor + flag ('0', or '1' when notifications are muted too) +
//     expiry (8 bytes big-endian, all zero for none): the user mutes it.
// While a mute exists, the user's follow edge to the actor in its
// following set is parked: the member is the actor's 8 bytes + 'm' + the
// mute's expiry instead of the bare 8 bytes. A fan-out's insert script
// looks up the bare member first, as it always did, so a delivery to a
// follower who mutes nobody costs nothing more, and only a miss looks for
// a parked edge whose mute has expired.
//
// A string literal, to be put in front of a script's body after
// FEEDCORE_LUA_LESS. It defines:
//   in_force(e, now): whether a mute expiring at e (8 bytes, NEVER: none)
//     is in force at now;
//   mute_of(rl, actor): the member of relations rl that mutes actor, or
//     nil;
//   parked_of(fg, actor): the parked edge to actor in following set fg,
//     or nil;
//   drop_edge(fg, actor): ends the edge to actor, bare or parked; true if
//     there was one;
//   purge_timeline(tl, actor): removes every entry of actor from timeline
//     tl; returns how many.
#ifndef FEEDCORE_REDIS_LUA_RELATIONS_H_
#define FEEDCORE_REDIS_LUA_RELATIONS_H_

#define FEEDCORE_LUA_RELATIONS                                     \
  "local NEVER = string.rep('\\0', 8)\n"                           \
  "local function in_force(e, now)\n"                              \
  "  return e == NEVER or less(now, e)\n"                          \
  "end\n"                                                          \
  "local function mute_of(rl, actor)\n"                            \
  "  return redis.call('ZRANGE', rl, '[m' .. actor,\n"             \
  "      '[m' .. actor .. '\\255', 'BYLEX', 'LIMIT', 0, 1)[1]\n"   \
  "end\n"                                                          \
  "local function parked_of(fg, actor)\n"                          \
  "  return redis.call('ZRANGE', fg, '[' .. actor .. 'm',\n"       \
  "      '[' .. actor .. 'm\\255', 'BYLEX', 'LIMIT', 0, 1)[1]\n"   \
  "end\n"                                                          \
  "local function drop_edge(fg, actor)\n"                          \
  "  if redis.call('ZREM', fg, actor) == 1 then return true end\n" \
  "  local parked = parked_of(fg, actor)\n"                        \
  "  if not parked then return false end\n"                        \
  "  redis.call('ZREM', fg, parked)\n"                             \
  "  return true\n"                                                \
  "end\n"                                                          \
  "local function purge_timeline(tl, actor)\n"                     \
  "  local removed = 0\n"                                          \
  "  for _, m in ipairs(redis.call('ZRANGE', tl, 0, -1)) do\n"     \
  "    if string.sub(m, 17, 24) == actor then\n"                   \
  "      redis.call('ZREM', tl, m)\n"                              \
  "      removed = removed + 1\n"                                  \
  "    end\n"                                                      \
  "  end\n"                                                        \
  "  return removed\n"                                             \
  "end\n"

#endif  // FEEDCORE_REDIS_LUA_RELATIONS_H_
