// NameRegistry (see include/feedcore/name_registry.h).
//
// Durability: a new name is assigned inside a WriteCall (stream/change_log.h)
// like every write of the engine and the boards, so with a DurableStore the
// assignment is refused when the log cannot take it, and Resolve returns
// once its record is as durable as the store's policy promises. An entry
// is "settled" once the call that assigned it has returned OK; a Resolve
// that finds an entry not settled yet (its assigning call still waits for
// the log) waits for the log too, so that no caller is told an id before it
// is durable.
#include "feedcore/name_registry.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/byte_codec.h"
#include "base/mutex.h"
#include "feedcore/change_stream.h"
#include "names/name_registry_access.h"

namespace feedcore {

using internal::ReaderLock;
using internal::WriterLock;

struct NameRegistry::State {
  explicit State(std::shared_ptr<ChangeStream> change_stream)
      : stream(std::move(change_stream)),
        log(internal::ChangeStreamAccess::Log(stream.get())) {}

  struct Entry {
    EntityId id = 0;
    bool settled = false;  // its assigning call returned OK
  };

  // Records a new assignment. REQUIRES: mu held exclusively, `name` and
  // `id` free.
  void Add(absl::string_view name, EntityId id, bool settled)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    ids.emplace(std::string(name), Entry{id, settled});
    names.emplace(id, std::string(name));
    if (id == ~EntityId{0}) {
      exhausted = true;
    } else if (id >= next_id) {
      next_id = id + 1;
    }
    if (log == nullptr) return;
    ChangeRecord record;
    record.kind = ChangeKind::kNameAssign;
    record.entity = id;
    record.name = std::string(name);
    log->Append(std::move(record));
  }

  const std::shared_ptr<ChangeStream> stream;
  internal::ChangeLog* const log;

  mutable internal::SharedMutex mu;
  absl::flat_hash_map<std::string, Entry> ids ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<EntityId, std::string> names ABSL_GUARDED_BY(mu);
  // The id the next new name gets, unless every id is taken.
  EntityId next_id ABSL_GUARDED_BY(mu) = kFirstNamedEntityId;
  bool exhausted ABSL_GUARDED_BY(mu) = false;
};

NameRegistry::NameRegistry() : NameRegistry(nullptr) {}

NameRegistry::NameRegistry(std::shared_ptr<ChangeStream> change_stream)
    : state_(std::make_unique<State>(std::move(change_stream))) {}

NameRegistry::~NameRegistry() = default;

absl::Status NameRegistry::ValidateName(absl::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError("a name must not be empty");
  }
  if (name.size() > kMaxEntityNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a name is at most ", kMaxEntityNameBytes,
                     " bytes; this one has ", name.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<EntityId> NameRegistry::Resolve(absl::string_view name) {
  if (absl::Status s = ValidateName(name); !s.ok()) return s;
  State& state = *state_;
  {
    ReaderLock lock(&state.mu);
    auto it = state.ids.find(name);
    if (it != state.ids.end() && it->second.settled) return it->second.id;
  }
  internal::WriteCall call(state.log);
  if (!call.admitted().ok()) return call.admitted();
  EntityId id = 0;
  bool settled = false;
  {
    WriterLock lock(&state.mu);
    auto it = state.ids.find(name);
    if (it != state.ids.end()) {
      id = it->second.id;
      settled = it->second.settled;
    } else {
      if (state.exhausted) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "the name registry has assigned every id from ",
            kFirstNamedEntityId, " up; \"", name, "\" cannot get one"));
      }
      id = state.next_id;
      state.Add(name, id, /*settled=*/state.log == nullptr);
    }
  }
  if (absl::Status s = call.Finish(/*succeeded=*/true); !s.ok()) return s;
  if (!settled) {
    WriterLock lock(&state.mu);
    state.ids.find(name)->second.settled = true;
  }
  return id;
}

absl::StatusOr<EntityId> NameRegistry::Find(absl::string_view name) const {
  if (absl::Status s = ValidateName(name); !s.ok()) return s;
  ReaderLock lock(&state_->mu);
  auto it = state_->ids.find(name);
  if (it == state_->ids.end()) {
    return absl::NotFoundError(
        absl::StrCat("no id has the name \"", name, "\""));
  }
  return it->second.id;
}

absl::StatusOr<std::string> NameRegistry::NameOf(EntityId id) const {
  ReaderLock lock(&state_->mu);
  auto it = state_->names.find(id);
  if (it == state_->names.end()) {
    return absl::NotFoundError(
        absl::StrCat("the name registry never assigned the id ", id));
  }
  return it->second;
}

size_t NameRegistry::size() const {
  ReaderLock lock(&state_->mu);
  return state_->ids.size();
}

namespace internal {

ChangeLog* NameRegistryAccess::log(const NameRegistry& registry) {
  return registry.state_->log;
}

uint64_t NameRegistryAccess::Serialize(const NameRegistry& registry,
                                       std::string* out) {
  NameRegistry::State& state = *registry.state_;
  std::vector<std::pair<EntityId, std::string_view>> sorted;
  ByteWriter w(out);
  ReaderLock lock(&state.mu);
  const uint64_t cut = state.log != nullptr ? state.log->NextSequence() : 0;
  sorted.reserve(state.names.size());
  for (const auto& [id, name] : state.names) sorted.emplace_back(id, name);
  std::sort(sorted.begin(), sorted.end());
  // An exhausted registry saves no next id past the last: 0 says so.
  w.U64(state.exhausted ? 0 : state.next_id);
  w.U64(sorted.size());
  for (const auto& [id, name] : sorted) {
    w.U64(id);
    w.Bytes(name);
  }
  return cut;
}

absl::Status NameRegistryAccess::Load(NameRegistry& registry,
                                      std::string_view bytes) {
  NameRegistry::State& state = *registry.state_;
  ByteReader in(bytes);
  const uint64_t next_id = in.U64();
  const uint64_t count = in.Count(8 + 8 + 1);
  absl::Status status;
  WriterLock lock(&state.mu);
  EntityId previous = 0;
  for (uint64_t i = 0; i < count && in.ok() && status.ok(); ++i) {
    const EntityId id = in.U64();
    const std::string_view bytes_of_name = in.Bytes();
    const absl::string_view name(bytes_of_name.data(), bytes_of_name.size());
    if (!in.ok()) break;
    if (absl::Status s = NameRegistry::ValidateName(name); !s.ok()) {
      status = absl::InvalidArgumentError(
          absl::StrCat("name ", i, " of the registry: ", s.message()));
    } else if (id < kFirstNamedEntityId || id <= previous ||
               (next_id != 0 && id >= next_id)) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "name ", i, " of the registry has the id ", id,
          ", out of order or outside ", kFirstNamedEntityId, "..", next_id));
    } else if (state.ids.contains(name)) {
      status = absl::InvalidArgumentError(
          absl::StrCat("the registry lists the name \"", name, "\" twice"));
    } else {
      state.ids.emplace(std::string(name),
                        NameRegistry::State::Entry{id, true});
      state.names.emplace(id, std::string(name));
    }
    previous = id;
  }
  if (status.ok() && (!in.ok() || !in.at_end())) {
    status = absl::InvalidArgumentError("the name registry is malformed");
  }
  if (status.ok() && next_id != 0 && next_id < kFirstNamedEntityId) {
    status = absl::InvalidArgumentError(
        absl::StrCat("the name registry's next id ", next_id, " is below ",
                     kFirstNamedEntityId));
  }
  if (!status.ok()) {
    state.ids.clear();
    state.names.clear();
    return status;
  }
  state.exhausted = next_id == 0;
  state.next_id = next_id == 0 ? ~EntityId{0} : next_id;
  return absl::OkStatus();
}

absl::Status NameRegistryAccess::Install(NameRegistry& registry,
                                         absl::string_view name, EntityId id) {
  if (absl::Status s = NameRegistry::ValidateName(name); !s.ok()) return s;
  if (id < kFirstNamedEntityId) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the name \"", name, "\" is given the id ", id, ", below the first ",
        kFirstNamedEntityId, " a registry assigns"));
  }
  NameRegistry::State& state = *registry.state_;
  WriterLock lock(&state.mu);
  auto by_name = state.ids.find(name);
  if (by_name != state.ids.end()) {
    if (by_name->second.id == id) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("the name \"", name, "\" is given the id ", id,
                     " but has ", by_name->second.id));
  }
  if (auto by_id = state.names.find(id); by_id != state.names.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the id ", id, " is given the name \"", name,
                     "\" but has \"", by_id->second, "\""));
  }
  state.Add(name, id, /*settled=*/true);
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace feedcore
