#include "publish_ledger.h"

#include <xxhash.h>

#include <algorithm>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace feedcore::server {

ActivityId KeyedActivityId(EntityId actor, absl::string_view key) {
  // A fixed seed: the id must be the same in every process.
  constexpr XXH64_hash_t kSeed = 0x6964656d706f74;  // "idempot"
  const XXH64_hash_t hash =
      XXH3_64bits_withSeed(key.data(), key.size(), kSeed ^ actor);
  return kFirstKeyedActivityId + (hash & ((ActivityId{1} << 61) - 1));
}

absl::StatusOr<PublishPlan> PublishLedger::Plan(
    const PublishRequest& request, Micros now, std::optional<Micros> first_ts) {
  if (request.key.size() > kMaxIdempotencyKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("an IDEMPOTENCY key is 1 to ", kMaxIdempotencyKeyBytes,
                     " bytes; this one has ", request.key.size()));
  }
  const size_t payload_hash = absl::Hash<absl::string_view>()(request.payload);
  internal::WriterLock lock(&mu_);
  Trim(now);
  if (!request.key.empty()) {
    auto it = by_key_.find(request.key);
    if (it != by_key_.end()) {
      const Remembered& r = it->second;
      if (r.actor != request.actor || r.payload_hash != payload_hash ||
          r.server_id != !request.id.has_value() ||
          (request.id.has_value() && *request.id != r.id) ||
          r.server_ts != !request.ts.has_value() ||
          (request.ts.has_value() && *request.ts != r.ts)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the IDEMPOTENCY key was used for another publish (actor ", r.actor,
            ", activity ", r.id,
            ") within the last 24 hours; use a new key for a new publish"));
      }
      return PublishPlan{r.id, r.ts, /*repeat=*/true};
    }
  }
  PublishPlan plan;
  if (request.id.has_value()) {
    plan.id = *request.id;
  } else if (!request.key.empty()) {
    plan.id = KeyedActivityId(request.actor, request.key);
  } else {
    absl::StatusOr<ActivityId> id = NextId(now);
    if (!id.ok()) return id.status();
    plan.id = *id;
  }
  Remembered remembered{request.actor,
                        plan.id,
                        now,
                        payload_hash,
                        !request.id.has_value(),
                        !request.ts.has_value(),
                        ++serial_};
  if (request.ts.has_value()) {
    plan.ts = *request.ts;
    remembered.ts = *request.ts;
  } else if (request.id.has_value()) {
    // A client id with '*': a retry of the same publish takes the time the
    // first one took.
    auto it = by_id_.find(plan.id);
    if (it != by_id_.end() && it->second.actor == request.actor &&
        it->second.payload_hash == payload_hash) {
      plan.ts = it->second.ts;
      remembered.ts = plan.ts;
    } else {
      plan.ts = first_ts.value_or(now);
      remembered.ts = plan.ts;
      by_id_[plan.id] = remembered;
      id_expiry_.push_back({now, {}, plan.id, remembered.serial});
    }
  } else {
    plan.ts = first_ts.value_or(now);
    remembered.ts = plan.ts;
  }
  if (!request.key.empty()) {
    by_key_[request.key] = remembered;
    key_expiry_.push_back(
        {now, std::string(request.key), 0, remembered.serial});
  }
  return plan;
}

void PublishLedger::Forget(const PublishRequest& request,
                           const PublishPlan& plan) {
  if (plan.repeat) return;
  internal::WriterLock lock(&mu_);
  if (!request.key.empty()) by_key_.erase(request.key);
  if (!request.ts.has_value()) {
    auto it = by_id_.find(plan.id);
    if (it != by_id_.end() && it->second.ts == plan.ts) by_id_.erase(it);
  }
}

void PublishLedger::Trim(Micros now) {
  auto trim = [&](std::deque<Expiry>& expiry, auto& map, auto key_of) {
    while (!expiry.empty() &&
           (expiry.front().at <= now - kPublishMemoryMicros ||
            expiry.size() > kMaxRememberedPublishes)) {
      auto it = map.find(key_of(expiry.front()));
      if (it != map.end() && it->second.serial == expiry.front().serial) {
        map.erase(it);
      }
      expiry.pop_front();
    }
  };
  trim(key_expiry_, by_key_, [](const Expiry& e) { return e.key; });
  trim(id_expiry_, by_id_, [](const Expiry& e) { return e.id; });
}

absl::StatusOr<ActivityId> PublishLedger::NextId(Micros now) {
  const ActivityId from_clock =
      kFirstServerActivityId +
      static_cast<ActivityId>(std::max<Micros>(now, 0));
  if (last_id_ == ~ActivityId{0}) {
    return absl::ResourceExhaustedError(
        "the server has handed out every activity id; give ids explicitly");
  }
  last_id_ = std::max(last_id_ + 1, from_clock);
  return last_id_;
}

}  // namespace feedcore::server
