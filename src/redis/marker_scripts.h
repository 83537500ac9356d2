// The Lua script of the Redis Cluster backend's read markers. A user's
// markers are one hash, {user}:mk, keyed by the marked feed ("type:owner");
// each value is the marker's 16-byte key (entry_codec.h's EntryKeyBytes),
// compared with the shared `less` of lua_ordering.h.
#ifndef FEEDCORE_REDIS_MARKER_SCRIPTS_H_
#define FEEDCORE_REDIS_MARKER_SCRIPTS_H_

#include "redis/lua_ordering.h"

namespace feedcore::redis {

// Sets a marker if it moves: forward, or anywhere but where it is when
// ARGV[3] is "1" (forced). KEYS: the user's marker hash. ARGV: the feed's
// field, the 16-byte key, force. Returns 1 when the marker moved, else 0.
inline constexpr char kSetMarkerScript[] = FEEDCORE_LUA_LESS R"lua(
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  if current == ARGV[2] then return 0 end
  if ARGV[3] ~= '1' and less(ARGV[2], current) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
)lua";

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_MARKER_SCRIPTS_H_
