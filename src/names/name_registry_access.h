// NameRegistryAccess: what snapshots and replicas need from a NameRegistry
// beyond its public calls: its change log, a copy of its names cut
// consistently with that log, and assignments installed when loading a
// snapshot or replaying a log.
//
// Snapshot bytes of a registry (the payload of a snapshot's names
// section, after the cut): u64 next id, u64 count, then per name in id
// order: u64 id, u64 length, the name's bytes.
#ifndef FEEDCORE_SRC_NAMES_NAME_REGISTRY_ACCESS_H_
#define FEEDCORE_SRC_NAMES_NAME_REGISTRY_ACCESS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "feedcore/name_registry.h"
#include "stream/change_log.h"

namespace feedcore::internal {

class NameRegistryAccess {
 public:
  // The registry's change log, or null.
  static ChangeLog* log(const NameRegistry& registry);

  // Appends the registry's snapshot bytes to `out` under its lock; returns
  // the log's next sequence read under that lock (0 without a log): every
  // assignment recorded below it is in the copy, none at or above.
  static uint64_t Serialize(const NameRegistry& registry, std::string* out);

  // Loads snapshot bytes into an empty registry, recording nothing.
  // InvalidArgument describing what is malformed (a bad name, an id below
  // kFirstNamedEntityId or at or above the next id, a name or id twice,
  // trailing bytes); the registry is then left empty.
  static absl::Status Load(NameRegistry& registry, std::string_view bytes);

  // Gives `id` to `name`, as a replayed kNameAssign record does, recording
  // the assignment in the registry's log. A repeat of an assignment the
  // registry holds changes nothing; InvalidArgument for a bad name, an id
  // below kFirstNamedEntityId, or a name or id that already has another.
  static absl::Status Install(NameRegistry& registry, absl::string_view name,
                              EntityId id);
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_NAMES_NAME_REGISTRY_ACCESS_H_
