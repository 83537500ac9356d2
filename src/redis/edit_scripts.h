// The Lua scripts of the Redis Cluster feed backend's edits and pins
// (EditsAndPins). An edit changes two fields of the activity's hash
// (feed_scripts.h): `payload`, and `edited`, the engine clock's time of
// the last edit (decimal, at least 1; absent if never edited). A user's
// pins are a list in its slot, the most recently pinned first, each an
// entry member as entry_codec.h lays it out (actor the user, group 0),
// with the key and expiry the activity had when pinned.
#ifndef FEEDCORE_REDIS_EDIT_SCRIPTS_H_
#define FEEDCORE_REDIS_EDIT_SCRIPTS_H_

#include "redis/lua_ordering.h"

namespace feedcore::redis {

// Replaces the payload of the activity KEYS[1] with ARGV[2] and stamps it
// edited at ARGV[4] (decimal) if it is stored, being delivered or
// delivered, expires after ARGV[3] (decimal, now) and was published by
// ARGV[1] (decimal). Returns {"ok"}, {"denied", its actor}, or
// {"missing"}, {"retracted"}, {"expired"} (nothing changed). The expiry is
// compared as Lua numbers (doubles), as counter_scripts.h does. The hash
// keeps its own key expiry: an edit never lengthens an activity's life.
inline constexpr char kEditActivityScript[] = R"lua(
local f = redis.call('HMGET', KEYS[1], 'state', 'actor', 'expires')
if not f[1] then return {'missing'} end
if f[1] ~= 'delivering' and f[1] ~= 'delivered' then return {'retracted'} end
if tonumber(f[3]) <= tonumber(ARGV[3]) then return {'expired'} end
if f[2] ~= ARGV[1] then return {'denied', f[2]} end
redis.call('HSET', KEYS[1], 'payload', ARGV[2], 'edited', ARGV[4])
return {'ok'}
)lua";

// Pins ARGV[1] (an entry member) at the head of the pin list KEYS[1],
// first dropping the pins that are no longer visible at ARGV[2] (now, 8
// bytes), so that expired ones never pile up. ARGV[3]: the most visible
// pins a list may hold; ARGV[4]: the key ttl in ms that keeps the list
// while the new pin is visible. Returns 1 (pinned), 0 (that activity is
// pinned already) or -1 (ARGV[3] visible pins already); only 1 changes
// anything but the dropping of expired pins.
inline constexpr char kPinScript[] = FEEDCORE_LUA_LESS R"lua(
local call = redis.call
local member, now = ARGV[1], ARGV[2]
local id = string.sub(member, 9, 16)
local visible = 0
for _, m in ipairs(call('LRANGE', KEYS[1], 0, -1)) do
  if not less(now, string.sub(m, 25, 32)) then
    call('LREM', KEYS[1], 0, m)
  elseif string.sub(m, 9, 16) == id then
    return 0
  else
    visible = visible + 1
  end
end
if visible >= tonumber(ARGV[3]) then return -1 end
-- A list this call creates (or one whose key expiry was dropped) has no
-- expiry yet; GT only ever lengthens an existing one, so the list lives
-- at least as long as the longest-lived pin it was given.
local fresh = call('PTTL', KEYS[1]) < 0
call('LPUSH', KEYS[1], member)
if fresh then
  call('PEXPIRE', KEYS[1], ARGV[4])
else
  call('PEXPIRE', KEYS[1], ARGV[4], 'GT')
end
return 1
)lua";

// Ends the pin of activity ARGV[1] (8 bytes) in each pin list of KEYS (one
// slot). Returns how many lists held one.
inline constexpr char kUnpinScript[] = R"lua(
local removed = 0
for _, list in ipairs(KEYS) do
  for _, m in ipairs(redis.call('LRANGE', list, 0, -1)) do
    if string.sub(m, 9, 16) == ARGV[1] then
      redis.call('LREM', list, 0, m)
      removed = removed + 1
      break
    end
  end
end
return removed
)lua";

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_EDIT_SCRIPTS_H_
