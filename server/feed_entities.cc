#include "feed_entities.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"

namespace feedcore::server {

absl::StatusOr<EntityArgument> EntityArgument::Parse(absl::string_view text,
                                                     absl::string_view what) {
  EntityArgument argument;
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return c >= '0' && c <= '9';
      })) {
    absl::StatusOr<uint64_t> id = ParseId(text, what);
    if (!id.ok()) return id.status();
    argument.id_ = *id;
    return argument;
  }
  if (absl::Status s = NameRegistry::ValidateName(text); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a decimal id or a name: ", s.message(),
                     text.empty() ? "" : absl::StrCat(" (", Quote(text), ")")));
  }
  argument.name_ = std::string(text);
  return argument;
}

absl::StatusOr<std::optional<EntityId>> EntityArgument::Resolve(
    const ServerContext& server, EntityUse use) const {
  if (id_.has_value()) return id_;
  if (server.names == nullptr) {
    return absl::FailedPreconditionError(
        "this server has no name registry; give entities by decimal id");
  }
  if (use == EntityUse::kAssign) {
    absl::StatusOr<EntityId> id = server.names->Resolve(name_);
    if (!id.ok()) return id.status();
    return std::optional<EntityId>(*id);
  }
  absl::StatusOr<EntityId> id = server.names->Find(name_);
  if (absl::IsNotFound(id.status())) return std::optional<EntityId>();
  if (!id.ok()) return id.status();
  return std::optional<EntityId>(*id);
}

void WriteEntity(RespWriter& reply, EntityId id, const NameRegistry* names) {
  if (names != nullptr) {
    if (absl::StatusOr<std::string> name = names->NameOf(id); name.ok()) {
      reply.Bulk(*name);
      return;
    }
  }
  reply.Bulk(absl::StrCat(id));
}

}  // namespace feedcore::server
