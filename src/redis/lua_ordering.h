// The one ordering of byte strings the Lua scripts of the Redis backend
// use: `less(a, b)` is true when `a` sorts before `b` byte by byte, a
// proper prefix first. That is the order Redis keeps members of equal
// score in (memcmp), so a script's comparisons agree with ZRANGE's order;
// entry keys and leaderboard members are fixed-length, where it is plain
// byte order.
//
// Never Lua's `<` on strings: it goes through strcoll, and Redis sets
// LC_COLLATE from its environment, so under a non-C locale `<` would not
// be the bytes' order.
//
// A string literal, to be put in front of a script's body:
//   constexpr char kScript[] = FEEDCORE_LUA_LESS R"lua(...)lua";
#ifndef FEEDCORE_REDIS_LUA_ORDERING_H_
#define FEEDCORE_REDIS_LUA_ORDERING_H_

#define FEEDCORE_LUA_LESS                                   \
  "local function less(a, b)\n"                             \
  "  for i = 1, math.min(#a, #b) do\n"                      \
  "    local x, y = string.byte(a, i), string.byte(b, i)\n" \
  "    if x ~= y then return x < y end\n"                   \
  "  end\n"                                                 \
  "  return #a < #b\n"                                      \
  "end\n"

#endif  // FEEDCORE_REDIS_LUA_ORDERING_H_
