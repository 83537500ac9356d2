// RedisFeedEngine's activity counters and ranked reads.
//
// The counters are fields of the activity's hash (counter_scripts.h). A
// ranked page collects the newest `window` entries of the merged home
// timeline (CollectHome, as ReadTimeline), reads their activities'
// counters in one pipeline (the nodes answer at once) and leaves the
// scoring, the cut after the cursor and the next cursor to RankWindow
// (rank_formula.h), the in-process engine's own code.
//
// How a change is dated: a walk leaves out of its later pages the entries
// whose counters changed at or after its start, so a change that its
// first page did not see must never be dated before that start. The
// start is the engine clock read before the first page reads the
// counters; a time read by the incrementing client before its script
// runs can be earlier than that while the change lands after the read.
// So the script marks the change undated ("changed now" to every reader)
// and the client, once the script has answered, reads the engine clock
// and dates it: that time follows the change, and therefore the start of
// any walk whose first page missed it (with one clock that does not go
// backwards, as in process). A later change replaces the mark, so only
// the latest change is dated, by its own caller. A client that fails
// between the two, or whose second script fails, leaves the mark: the
// entry then stays out of the later pages of walks (which the contract
// allows) until its next change.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "contract/rank_formula.h"
#include "redis/redis_feed_engine.h"

namespace feedcore::redis {
namespace {

const char* const kCounterFields[kActivityCounterCount] = {"c0", "c1", "c2",
                                                           "c3"};

absl::Status NoCounters(ActivityId id, absl::string_view why) {
  return absl::NotFoundError(
      absl::StrCat("no activity ", id, " to count (", why, ")"));
}

// A counter field's value: nil (never changed) is 0.
bool ParseCounter(const Reply& reply, int64_t* out) {
  if (reply.is_nil()) {
    *out = 0;
    return true;
  }
  return reply.type == Reply::Type::kString && absl::SimpleAtoi(reply.str, out);
}

}  // namespace

absl::StatusOr<ActivityCounters> RedisFeedEngine::IncrementCounter(
    ActivityId activity_id, size_t counter, int64_t delta) {
  if (absl::Status bad = internal::ValidateCounterChange(counter, delta);
      !bad.ok()) {
    return bad;
  }
  const std::string key = ActivityKey(activity_id);
  // Not idempotent: a call whose fate is unclear is not sent again.
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      increment_counter_, key,
      {kCounterFields[counter], absl::StrCat(delta), absl::StrCat(Now())},
      /*idempotent=*/false));
  if (!reply.ok()) return reply.status();
  const std::vector<Reply>& r = reply->elements;
  if (r.empty() || r[0].type != Reply::Type::kString) {
    return UnexpectedReply("the increment-counter script", *reply);
  }
  const std::string& outcome = r[0].str;
  if (outcome == "missing") {
    return NoCounters(activity_id, "never published, or evicted");
  }
  if (outcome == "retracted" || outcome == "expired") {
    return NoCounters(activity_id, outcome);
  }
  if (outcome == "overflow" && r.size() == 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "counter ", counter, " of activity ", activity_id, " is ", r[1].str,
        "; adding ", delta, " leaves the range of int64"));
  }
  ActivityCounters counters;
  if (outcome != "ok" || r.size() != 2 + kActivityCounterCount) {
    return UnexpectedReply("the increment-counter script", *reply);
  }
  for (size_t i = 0; i < kActivityCounterCount; ++i) {
    if (!ParseCounter(r[2 + i], &counters[i])) {
      return UnexpectedReply("the increment-counter script", *reply);
    }
  }
  // The clock is read only now, after the change was applied (see the top
  // of this file). The change stands whatever this call does: when it
  // fails, the mark stays, which only leaves the entry out of later pages
  // of walks until its next change, so the caller is not told to retry.
  client_
      ->RunOne(ClusterClient::ScriptCommand(date_counters_, key,
                                            {r[1].str, absl::StrCat(Now())}))
      .IgnoreError();
  return counters;
}

absl::StatusOr<ActivityCounters> RedisFeedEngine::GetCounters(
    ActivityId activity_id) const {
  std::vector<std::string> args = {"HMGET", ActivityKey(activity_id), "state",
                                   "expires"};
  for (const char* field : kCounterFields) args.push_back(field);
  absl::StatusOr<Reply> reply = client_->RunOne(PlainCommand(std::move(args)));
  if (!reply.ok()) return reply.status();
  const std::vector<Reply>& r = reply->elements;
  if (r.size() != 2 + kActivityCounterCount) {
    return UnexpectedReply("HMGET of an activity's counters", *reply);
  }
  if (r[0].is_nil()) {
    return NoCounters(activity_id, "never published, or evicted");
  }
  if (r[0].str == "retracting" || r[0].str == "retracted") {
    return NoCounters(activity_id, "retracted");
  }
  Micros expires_at = 0;
  if (!absl::SimpleAtoi(r[1].str, &expires_at)) {
    return UnexpectedReply("HMGET of an activity's counters", *reply);
  }
  if (expires_at <= Now()) return NoCounters(activity_id, "expired");
  ActivityCounters counters;
  for (size_t i = 0; i < kActivityCounterCount; ++i) {
    if (!ParseCounter(r[2 + i], &counters[i])) {
      return UnexpectedReply("HMGET of an activity's counters", *reply);
    }
  }
  return counters;
}

absl::StatusOr<RankedPage> RedisFeedEngine::ReadRanked(
    EntityId owner, const RankedReadOptions& options) const {
  absl::StatusOr<internal::RankedWalk> walk =
      internal::BeginRankedWalk(owner, options, options_.max_page_size,
                                options_.max_timeline_length, Now());
  if (!walk.ok()) return walk.status();
  if (!options.kinds.every_kind()) {
    return NoActivityKinds("RankedReadOptions.kinds");
  }
  if (walk->done) return RankedPage{};
  absl::StatusOr<std::vector<StoredEntry>> window =
      CollectHome(owner, ReadOrder::kNewestFirst, EntryKey::Min(),
                  {walk->newest_ts, walk->newest_id}, options.window);
  if (!window.ok()) return window.status();
  std::vector<internal::CounterState> counters(window->size());
  if (!window->empty()) {
    std::vector<Command> commands;
    commands.reserve(window->size());
    for (const StoredEntry& entry : *window) {
      std::vector<std::string> args = {"HMGET", ActivityKey(entry.activity_id)};
      for (const char* field : kCounterFields) args.push_back(field);
      args.push_back("cat");
      commands.push_back(PlainCommand(std::move(args)));
    }
    absl::StatusOr<std::vector<Reply>> replies =
        client_->Run(std::move(commands));
    if (!replies.ok()) return replies.status();
    for (size_t i = 0; i < window->size(); ++i) {
      const Reply& reply = (*replies)[i];
      internal::CounterState& state = counters[i];
      bool ok = reply.elements.size() == kActivityCounterCount + 1;
      for (size_t c = 0; ok && c < kActivityCounterCount; ++c) {
        ok = ParseCounter(reply.elements[c], &state.counters[c]);
      }
      if (ok) {
        const Reply& at = reply.elements[kActivityCounterCount];
        if (at.is_nil()) {
          state.changed_at = internal::kNeverCounted;
        } else if (!at.str.empty() && at.str[0] == 'p') {
          state.changed_at = internal::kCountedNow;  // not dated yet
        } else {
          ok = absl::SimpleAtoi(at.str, &state.changed_at);
        }
      }
      if (!ok) return UnexpectedReply("HMGET of an activity's counters", reply);
    }
  }
  RankedPage page =
      internal::RankWindow(owner, options, *walk, *std::move(window), counters);
  if (options.hydrate && !page.entries.empty()) {
    std::vector<StoredEntry> entries;
    entries.reserve(page.entries.size());
    for (RankedEntry& r : page.entries) entries.push_back(std::move(r.entry));
    if (absl::Status status = Hydrate(&entries); !status.ok()) return status;
    for (size_t k = 0; k < entries.size(); ++k) {
      page.entries[k].entry = std::move(entries[k]);
    }
  }
  return page;
}

}  // namespace feedcore::redis
