// The reference model of FeedEngine's low-level timeline calls (Insert,
// InsertFanout, InsertBatch, Remove, ReadTimeline, EvictExpired): one
// ordered map per owner, holding expired entries until an eviction reclaims
// them, exactly as the engine's contract describes. Plain containers and no
// cleverness, so that it is obviously right.
//
// Shared by the model-based test (tests/feed/model_test.cc) and the
// API-sequence fuzz target (fuzz/api_sequence_fuzzer.cc), so both hold the
// engine to the same reference. Free of any test framework.
#ifndef FEEDCORE_TESTS_TIMELINE_MODEL_H_
#define FEEDCORE_TESTS_TIMELINE_MODEL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

namespace feedcore::testing {

class TimelineModel {
 public:
  using Key = std::pair<Micros, ActivityId>;

  TimelineModel(size_t cap, Micros default_ttl)
      : cap_(cap), default_ttl_(default_ttl) {}

  // The expiry an insert with `o` at time `now` gives its entries.
  Micros ExpiryFor(const InsertOptions& o, Micros now) const {
    if (o.expires_at) return *o.expires_at;
    return now + (o.ttl == 0 ? default_ttl_ : o.ttl);
  }

  // Puts one entry and counts what happened in `r`, as Insert does.
  void Put(EntityId owner, const TimelineEntry& e, Micros expires_at,
           InsertResult* r) {
    std::map<Key, Value>& tl = timelines_[owner];
    const Key key{e.ts, e.activity_id};
    auto it = tl.find(key);
    if (it != tl.end()) {
      it->second = {e.actor, expires_at};
      ++r->replaced;
      return;
    }
    if (tl.size() >= cap_ && key < tl.begin()->first) {
      ++r->rejected_by_cap;
      return;
    }
    tl[key] = {e.actor, expires_at};
    ++r->inserted;
    while (tl.size() > cap_) {
      tl.erase(tl.begin());
      ++r->trimmed;
    }
  }

  // True when the key was there (and is now gone).
  bool Remove(EntityId owner, Key key) {
    auto it = timelines_.find(owner);
    return it != timelines_.end() && it->second.erase(key) > 0;
  }

  // Entries held that have expired at `now` (what EvictExpired reclaims).
  size_t CountExpired(Micros now) const {
    size_t n = 0;
    for (const auto& [owner, tl] : timelines_) {
      for (const auto& [k, v] : tl) n += v.expires_at <= now;
    }
    return n;
  }

  void DropExpired(Micros now) {
    for (auto& [owner, tl] : timelines_) {
      std::erase_if(
          tl, [now](const auto& kv) { return kv.second.expires_at <= now; });
    }
  }

  // Visible entries of `owner` in `order` within the window, strictly after
  // `after` when given.
  std::vector<StoredEntry> Visible(EntityId owner, ReadOrder order,
                                   std::optional<Micros> min_ts,
                                   std::optional<Micros> max_ts,
                                   std::optional<Key> after, Micros now) const {
    std::vector<StoredEntry> out;
    auto it = timelines_.find(owner);
    if (it == timelines_.end()) return out;
    auto visit = [&](const Key& k, const Value& v) {
      if (v.expires_at <= now) return;
      if (min_ts && k.first < *min_ts) return;
      if (max_ts && k.first > *max_ts) return;
      if (after) {
        if (order == ReadOrder::kNewestFirst && !(k < *after)) return;
        if (order == ReadOrder::kOldestFirst && !(k > *after)) return;
      }
      out.push_back({k.first, k.second, v.actor, v.expires_at, 0, {}});
    };
    if (order == ReadOrder::kNewestFirst) {
      for (auto e = it->second.rbegin(); e != it->second.rend(); ++e) {
        visit(e->first, e->second);
      }
    } else {
      for (const auto& [k, v] : it->second) visit(k, v);
    }
    return out;
  }

  // Entries held, expired ones included.
  size_t entries() const {
    size_t n = 0;
    for (const auto& [owner, tl] : timelines_) n += tl.size();
    return n;
  }
  // Timelines holding at least one entry.
  size_t timelines() const {
    size_t n = 0;
    for (const auto& [owner, tl] : timelines_) n += !tl.empty();
    return n;
  }
  // A random stored key of `owner`, if any.
  std::optional<Key> AnyKey(EntityId owner, std::mt19937_64& rng) const {
    return KeyAt(owner, rng());
  }
  // The stored key of `owner` at position `index` modulo its size, if any.
  std::optional<Key> KeyAt(EntityId owner, uint64_t index) const {
    auto it = timelines_.find(owner);
    if (it == timelines_.end() || it->second.empty()) return std::nullopt;
    auto e = it->second.begin();
    std::advance(e, static_cast<long>(index % it->second.size()));
    return e->first;
  }

 private:
  struct Value {
    EntityId actor;
    Micros expires_at;
  };

  const size_t cap_;
  const Micros default_ttl_;
  std::map<EntityId, std::map<Key, Value>> timelines_;
};

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_TIMELINE_MODEL_H_
