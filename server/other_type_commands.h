// The commands of Redis's other data types that a client may send to a
// sorted-set key by mistake: each answers Redis's WRONGTYPE error when its
// key exists, as redis-server does for a key that holds a sorted set, and
// an error saying that feedcore-server keeps sorted sets only when it does
// not (where redis-server would create or read a value of that type).
//
// The ones listed are those whose key is their first argument and which
// redis-server checks for type before parsing any other argument, so that
// every reply on an existing key, arity errors included, is redis-server's
// own: GET, GETDEL, GETSET, STRLEN, APPEND, INCR, DECR; HGET, HMGET, HSET,
// HSETNX, HMSET, HDEL, HLEN, HEXISTS, HSTRLEN, HGETALL, HKEYS, HVALS;
// LPUSH, RPUSH, LPUSHX, RPUSHX, LLEN; SADD, SREM, SMEMBERS, SISMEMBER,
// SMISMEMBER, SCARD; XLEN. They change nothing.
//
// Thread-safe, as every command handler; O(1).
#ifndef FEEDCORE_SERVER_OTHER_TYPE_COMMANDS_H_
#define FEEDCORE_SERVER_OTHER_TYPE_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddOtherTypeCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_OTHER_TYPE_COMMANDS_H_
