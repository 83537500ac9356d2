// RedisFeedEngine's edits and pins (scripts in edit_scripts.h).
//
// An edit rewrites the payload in the activity's hash, the one copy every
// feed hydrates from: one script call, however many feeds hold it.
//
// A pin lives in the owner's pin list, in the owner's slot, while the
// activity it names is a hash in a slot of its own, so Pin reads the
// activity first and pins after. Retract marks the activity before it
// ends the actor's pin (with its own feed's copy, RemoveCopies), so a Pin
// that read the activity before the mark reads the mark again once it has
// pinned and ends its pin itself when it finds one: either way no pin of
// a retracted activity stays.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "contract/feed_arguments.h"
#include "feedcore/feed_facets.h"
#include "redis/entry_codec.h"
#include "redis/redis_feed_engine.h"

namespace feedcore::redis {
namespace {

absl::Status NotEditable(ActivityId id) {
  return absl::NotFoundError(absl::StrCat(
      "activity ", id,
      " is not a published activity (unknown, retracted or expired)"));
}

absl::Status NothingToPin(EntityId owner, ActivityId id) {
  return absl::NotFoundError(absl::StrCat(
      "entity ", owner, " has no visible published activity ", id, " to pin"));
}

bool Live(absl::string_view state) {
  return state == "delivering" || state == "delivered";
}

}  // namespace

absl::StatusOr<Micros> RedisFeedEngine::EditActivity(EntityId actor,
                                                     ActivityId activity_id,
                                                     std::string_view payload) {
  if (absl::Status bad = internal::ValidateEditedPayload(
          absl::string_view(payload.data(), payload.size()),
          options_.max_payload_bytes);
      !bad.ok()) {
    return bad;
  }
  const Micros now = Now();
  // At least 1: edited_at 0 means never edited.
  const Micros edited_at = std::max<Micros>(now, 1);
  // Not resent after an unclear failure: a resend that lands after
  // another edit would bring back the older payload.
  absl::StatusOr<Reply> reply = client_->RunOne(
      ClusterClient::ScriptCommand(edit_activity_, ActivityKey(activity_id),
                                   {absl::StrCat(actor), std::string(payload),
                                    absl::StrCat(now), absl::StrCat(edited_at)},
                                   /*idempotent=*/false));
  if (!reply.ok()) return reply.status();
  constexpr absl::string_view kWhat = "the edit-activity script";
  if (reply->type != Reply::Type::kArray || reply->elements.empty()) {
    return UnexpectedReply(kWhat, *reply);
  }
  const std::string& outcome = reply->elements[0].str;
  if (outcome == "ok") return edited_at;
  if (outcome == "missing" || outcome == "retracted" || outcome == "expired") {
    return NotEditable(activity_id);
  }
  if (outcome == "denied" && reply->elements.size() == 2) {
    return absl::PermissionDeniedError(absl::StrCat(
        "activity ", activity_id, " was published by ", reply->elements[1].str,
        ", not by ", actor, ": only its actor edits it"));
  }
  return UnexpectedReply(kWhat, *reply);
}

absl::StatusOr<bool> RedisFeedEngine::Pin(EntityId owner,
                                          ActivityId activity_id) {
  const std::string activity_key = ActivityKey(activity_id);
  absl::StatusOr<Reply> facts = client_->RunOne(
      PlainCommand({"HMGET", activity_key, "state", "actor", "ts", "expires"}));
  if (!facts.ok()) return facts.status();
  constexpr absl::string_view kWhat = "HMGET of an activity to pin";
  if (facts->type != Reply::Type::kArray || facts->elements.size() != 4) {
    return UnexpectedReply(kWhat, *facts);
  }
  const std::vector<Reply>& f = facts->elements;
  if (f[0].is_nil() || !Live(f[0].str)) {
    return NothingToPin(owner, activity_id);
  }
  EntityId actor = 0;
  Micros ts = 0;
  Micros expires_at = 0;
  if (!absl::SimpleAtoi(f[1].str, &actor) || !absl::SimpleAtoi(f[2].str, &ts) ||
      !absl::SimpleAtoi(f[3].str, &expires_at)) {
    return UnexpectedReply(kWhat, *facts);
  }
  const Micros now = Now();
  if (actor != owner || expires_at <= now) {
    return NothingToPin(owner, activity_id);
  }
  const StoredEntry pin{ts, activity_id, owner, expires_at, 0, {}, 0};
  // Not resent after an unclear failure: a resend of a pin that went
  // through answers "pinned already".
  absl::StatusOr<Reply> pinned = client_->RunOne(ClusterClient::ScriptCommand(
      pin_, PinKey(owner),
      {EncodeEntryMember(pin), BigEndian(static_cast<uint64_t>(now)),
       absl::StrCat(kMaxPinnedEntries),
       absl::StrCat(KeyTtlMillis(expires_at, now))},
      /*idempotent=*/false));
  if (!pinned.ok()) return pinned.status();
  if (pinned->type != Reply::Type::kInteger) {
    return UnexpectedReply("the pin script", *pinned);
  }
  if (pinned->integer == 0) return false;
  if (pinned->integer < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("entity ", owner, " has ", kMaxPinnedEntries,
                     " pins already (kMaxPinnedEntries); unpin one first"));
  }
  // A Retract that marked the activity after the read above may have
  // ended the pins before this one was made (see the top of this file).
  absl::StatusOr<Reply> state =
      client_->RunOne(PlainCommand({"HGET", activity_key, "state"}));
  if (!state.ok()) return state.status();
  if (state->type == Reply::Type::kString && !Live(state->str)) {
    absl::StatusOr<Reply> ended = client_->RunOne(ClusterClient::ScriptCommand(
        unpin_, PinKey(owner), {BigEndian(activity_id)}));
    if (!ended.ok()) return ended.status();
  }
  // Pinned, and ended by the Retract that followed, when it raced one.
  return true;
}

absl::StatusOr<bool> RedisFeedEngine::Unpin(EntityId owner,
                                            ActivityId activity_id) {
  // Not resent after an unclear failure: a resend of an unpin that went
  // through answers "not pinned".
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      unpin_, PinKey(owner), {BigEndian(activity_id)},
      /*idempotent=*/false));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kInteger) {
    return UnexpectedReply("the unpin script", *reply);
  }
  return reply->integer > 0;
}

absl::StatusOr<std::vector<StoredEntry>> RedisFeedEngine::ReadPinned(
    EntityId owner, bool hydrate) const {
  absl::StatusOr<Reply> reply =
      client_->RunOne(PlainCommand({"LRANGE", PinKey(owner), "0", "-1"}));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kArray) {
    return UnexpectedReply("a pin list read", *reply);
  }
  const Micros now = Now();
  std::vector<StoredEntry> entries;
  for (const Reply& member : reply->elements) {
    std::optional<StoredEntry> pin = DecodeEntryMember(member.str);
    if (!pin.has_value()) {
      return absl::InternalError(
          "a pin list in redis holds a member this backend did not write");
    }
    if (now >= pin->expires_at) continue;
    entries.push_back(*std::move(pin));
    // Pin refuses a pin beyond the limit; this only bounds the answer.
    if (entries.size() == kMaxPinnedEntries) break;
  }
  if (hydrate) {
    if (absl::Status status = Hydrate(&entries); !status.ok()) return status;
  }
  return entries;
}

}  // namespace feedcore::redis
