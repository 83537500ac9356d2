// Entity arguments and replies of the FEED.* commands, by id or by name.
//
// An argument made only of decimal digits is a numeric EntityId, parsed as
// before names existed (ParseId: 0 .. 2^64-1, its error otherwise). Any
// other argument is a name of 1..kMaxEntityNameBytes bytes, resolved
// through the server's NameRegistry (feedcore/name_registry.h), which
// numbers names from kFirstNamedEntityId (2^62) up, so numeric ids below
// 2^62 never meet a named entity. A command checks every argument first
// and resolves its entities last, so that a command refused for a bad
// argument assigns no name:
//   kAssign   writes that make an entity take part (FEED.FOLLOW's two,
//             FEED.PUBLISH's actor, FEED.BLOCK, FEED.MUTE...): a new name
//             gets its id.
//   kLookUp   reads and writes that only take away (FEED.READ,
//             FEED.UNFOLLOW, FEED.UNBLOCK...): a name without an id is an
//             entity with nothing (nullopt), so reads answer an empty
//             page or zero counts and removals answer "nothing changed",
//             and no name is assigned.
// Replies give ids as decimal bulk strings; with the NAMES option, list
// replies give each entity's name instead, or its decimal id when it has
// no name.
#ifndef FEEDCORE_SERVER_FEED_ENTITIES_H_
#define FEEDCORE_SERVER_FEED_ENTITIES_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "command_table.h"
#include "feedcore/name_registry.h"
#include "feedcore/types.h"
#include "resp_writer.h"

namespace feedcore::server {

enum class EntityUse { kAssign, kLookUp };

// One checked entity argument.
class EntityArgument {
 public:
  EntityArgument() = default;

  // Checks `text`; `what` names the argument in errors ("follower").
  static absl::StatusOr<EntityArgument> Parse(absl::string_view text,
                                              absl::string_view what);

  // The entity's id (see above): nullopt only for kLookUp of a name
  // without one. The registry's errors (a durable store refusing writes)
  // for kAssign.
  absl::StatusOr<std::optional<EntityId>> Resolve(const ServerContext& server,
                                                  EntityUse use) const;

 private:
  std::optional<EntityId> id_;  // set for a numeric argument
  std::string name_;
};

// Writes `id`: its name when `names` is set and it has one, else the
// decimal id.
void WriteEntity(RespWriter& reply, EntityId id, const NameRegistry* names);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_ENTITIES_H_
