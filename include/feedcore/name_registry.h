// NameRegistry: string names for entities, for programs whose users,
// channels or artists are named by strings while the engine counts in
// EntityIds.
//
//   feedcore::NameRegistry names;                      // in memory only
//   feedcore::EntityId alice = names.Resolve("user:alice").value();
//   engine->Follow(alice, names.Resolve("user:bob").value());
//   names.Find("user:carol");                          // NotFound: unknown
//   names.NameOf(alice).value();                       // "user:alice"
//
// With a DurableStore, use its registry (DurableStore::names()): every
// assignment is a record of the store's log (ChangeKind::kNameAssign) and
// part of its snapshots, so an assigned id survives a crash exactly as an
// acknowledged write does (the store's fsync policy), and comes back with
// the same name. A registry made with a change stream records into it
// (SaveSnapshot and Replica take it along, snapshot.h); one made without
// keeps its names in memory only.
//
// Contract
// --------
// A name is 1..kMaxEntityNameBytes bytes, any bytes (binary-safe); other
// names are refused with InvalidArgument by every call. Ids are handed
// out from kFirstNamedEntityId upward, one per new name, in the order the
// names were first resolved; an id is never given to a second name, and
// names are never removed, so an id is never reused. Numbering starts high
// so that a program can use the ids below it for entities it numbers
// itself. ResourceExhausted once the id space (2^62 ids) is used up.
//
// Errors: Resolve fails only for a bad name, an exhausted id space or a
// DurableStore that refuses writes (its error: the assignment is then not
// made, or, for an I/O error after it was made in memory, not
// acknowledged, as for every write of the store). Find and NameOf answer
// NotFound for what was never assigned.
//
// Thread safety: every call may run from any thread. One reader/writer
// mutex guards the maps; a Resolve of a known name takes it shared; a new
// name takes it exclusively while the assignment is recorded (the change
// stream's mutex, a leaf, is taken under it).
//
// Cost: Find and NameOf are one hash lookup. A new name costs two map
// insertions (the name is stored twice, about 2 x (name bytes + 48) bytes),
// its change record, and with a DurableStore the wait for the log as for
// any write.
#ifndef FEEDCORE_NAME_REGISTRY_H_
#define FEEDCORE_NAME_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "feedcore/export.h"
#include "feedcore/types.h"

namespace feedcore {

class ChangeStream;

namespace internal {
class NameRegistryAccess;
}  // namespace internal

// The longest name a registry takes, in bytes.
inline constexpr size_t kMaxEntityNameBytes = 512;

// The first id a registry assigns; the ids below it are the program's own.
inline constexpr EntityId kFirstNamedEntityId = EntityId{1} << 62;

class FEEDCORE_EXPORT NameRegistry {
 public:
  // In memory only.
  NameRegistry();
  // Records each assignment in `change_stream` (null: none).
  explicit NameRegistry(std::shared_ptr<ChangeStream> change_stream);
  ~NameRegistry();
  NameRegistry(const NameRegistry&) = delete;
  NameRegistry& operator=(const NameRegistry&) = delete;

  // The id of `name`, assigned now if it has none. Idempotent: every call
  // with the same name answers the same id.
  absl::StatusOr<EntityId> Resolve(absl::string_view name);

  // The id of `name`; NotFound if it has none.
  absl::StatusOr<EntityId> Find(absl::string_view name) const;

  // The name of `id`; NotFound if the registry never assigned it.
  absl::StatusOr<std::string> NameOf(EntityId id) const;

  // Names assigned so far.
  size_t size() const;

  // InvalidArgument naming the problem unless `name` is a name a registry
  // takes (see above).
  static absl::Status ValidateName(absl::string_view name);

 private:
  friend class internal::NameRegistryAccess;
  struct State;
  const std::unique_ptr<State> state_;
};

}  // namespace feedcore

#endif  // FEEDCORE_NAME_REGISTRY_H_
