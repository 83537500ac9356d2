// The commands on the keyspace as a whole, with Redis's replies: DEL,
// UNLINK, EXISTS, TYPE, RENAME, RENAMENX, DBSIZE, KEYS, SCAN, FLUSHDB,
// FLUSHALL, and the
// server commands clients and their test fixtures call on connecting:
// SELECT, TIME, WAIT; and expiries: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT
// (NX, XX, GT, LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, on the
// engine clock, durable with the keys (LeaderboardStore, "Expiry").
//
// The keyspace is the sorted-set keys (LeaderboardStore); a key exists
// while its set has members, as in Redis. Feeds are not keys: they are
// addressed by entity and activity ids through the FEED.* commands, so
// KEYS and SCAN do not list them and FLUSHDB leaves them.
#ifndef FEEDCORE_SERVER_KEYSPACE_COMMANDS_H_
#define FEEDCORE_SERVER_KEYSPACE_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddKeyspaceCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_KEYSPACE_COMMANDS_H_
