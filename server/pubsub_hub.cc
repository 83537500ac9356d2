#include "pubsub_hub.h"

#include <algorithm>
#include <utility>

#include "feed_paging.h"
#include "glob_match.h"
#include "resp_writer.h"

namespace feedcore::server {
namespace {

// Element encodings are the same in RESP2 and RESP3; only the pushes'
// array headers differ, which the sinks write.
constexpr int kBodyProtocol = 2;

// Removes `sink` from `sinks`; returns whether it was there.
template <typename Sinks>
bool EraseSink(Sinks& sinks, const PushSink* sink) {
  auto it = std::find_if(sinks.begin(), sinks.end(), [sink](const auto& held) {
    return held.get() == sink;
  });
  if (it == sinks.end()) return false;
  sinks.erase(it);
  return true;
}

template <typename Sinks>
bool HasSink(const Sinks& sinks, const PushSink* sink) {
  return std::any_of(sinks.begin(), sinks.end(),
                     [sink](const auto& held) { return held.get() == sink; });
}

}  // namespace

void PubSubHub::AttachFeeds(const FeedEngine* feeds,
                            const NameRegistry* names) {
  internal::WriterLock lock(&mu_);
  feeds_ = feeds;
  names_ = names;
}

PubSubHub::FeedIndex& PubSubHub::IndexOf(FeedChannel::Kind kind) {
  return kind == FeedChannel::Kind::kTimeline ? timelines_ : notifications_;
}

bool PubSubHub::Subscribe(const std::shared_ptr<PushSink>& sink,
                          const std::string& channel,
                          std::optional<FeedChannel> feed) {
  internal::WriterLock lock(&mu_);
  auto [it, created] = channels_.try_emplace(channel);
  Channel& entry = it->second;
  if (HasSink(entry.sinks, sink.get())) return false;
  entry.sinks.push_back(sink);
  if (created && feed.has_value()) {
    entry.feed = feed;
    IndexOf(feed->kind)[feed->entity].push_back(channel);
    feed_channels_.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

bool PubSubHub::Unsubscribe(const PushSink* sink, const std::string& channel) {
  internal::WriterLock lock(&mu_);
  auto it = channels_.find(channel);
  if (it == channels_.end() || !EraseSink(it->second.sinks, sink)) {
    return false;
  }
  if (!it->second.sinks.empty()) return true;
  if (const std::optional<FeedChannel>& feed = it->second.feed;
      feed.has_value()) {
    FeedIndex& index = IndexOf(feed->kind);
    auto named = index.find(feed->entity);
    std::vector<std::string>& names = named->second;
    names.erase(std::find(names.begin(), names.end(), channel));
    if (names.empty()) index.erase(named);
    feed_channels_.fetch_sub(1, std::memory_order_relaxed);
  }
  channels_.erase(it);
  return true;
}

bool PubSubHub::SubscribePattern(const std::shared_ptr<PushSink>& sink,
                                 const std::string& pattern) {
  internal::WriterLock lock(&mu_);
  Sinks& sinks = patterns_[pattern];
  if (HasSink(sinks, sink.get())) return false;
  sinks.push_back(sink);
  return true;
}

bool PubSubHub::UnsubscribePattern(const PushSink* sink,
                                   const std::string& pattern) {
  internal::WriterLock lock(&mu_);
  auto it = patterns_.find(pattern);
  if (it == patterns_.end() || !EraseSink(it->second, sink)) return false;
  if (it->second.empty()) patterns_.erase(it);
  return true;
}

size_t PubSubHub::PushMessage(const Sinks& sinks, absl::string_view channel,
                              absl::string_view data) {
  if (sinks.empty()) return 0;
  std::string body;
  RespWriter writer(&body, kBodyProtocol);
  writer.Bulk("message");
  writer.Bulk(channel);
  body.append(data.data(), data.size());
  size_t pushed = 0;
  for (const std::shared_ptr<PushSink>& sink : sinks) {
    if (sink->Push(3, body)) ++pushed;
  }
  return pushed;
}

size_t PubSubHub::Publish(absl::string_view channel,
                          absl::string_view message) {
  Sinks direct;
  std::vector<std::pair<std::string, Sinks>> matched;
  {
    internal::ReaderLock lock(&mu_);
    if (auto it = channels_.find(channel); it != channels_.end()) {
      direct = it->second.sinks;
    }
    for (const auto& [pattern, sinks] : patterns_) {
      if (GlobMatch(pattern, channel)) matched.emplace_back(pattern, sinks);
    }
  }
  std::string data;
  RespWriter(&data, kBodyProtocol).Bulk(message);
  size_t pushed = PushMessage(direct, channel, data);
  for (const auto& [pattern, sinks] : matched) {
    std::string body;
    RespWriter writer(&body, kBodyProtocol);
    writer.Bulk("pmessage");
    writer.Bulk(pattern);
    writer.Bulk(channel);
    body.append(data);
    for (const std::shared_ptr<PushSink>& sink : sinks) {
      if (sink->Push(4, body)) ++pushed;
    }
  }
  return pushed;
}

std::vector<std::string> PubSubHub::Channels(
    std::optional<absl::string_view> pattern) const {
  std::vector<std::string> out;
  internal::ReaderLock lock(&mu_);
  for (const auto& [channel, entry] : channels_) {
    if (!pattern.has_value() || GlobMatch(*pattern, channel)) {
      out.push_back(channel);
    }
  }
  return out;
}

size_t PubSubHub::Subscribers(absl::string_view channel) const {
  internal::ReaderLock lock(&mu_);
  auto it = channels_.find(channel);
  return it == channels_.end() ? 0 : it->second.sinks.size();
}

size_t PubSubHub::Patterns() const {
  internal::ReaderLock lock(&mu_);
  return patterns_.size();
}

std::string PubSubHub::EntryBody(const TimelineEntry& entry) const {
  StoredEntry stored;
  stored.ts = entry.ts;
  stored.activity_id = entry.activity_id;
  stored.actor = entry.actor;
  // The payload and expiry, from the actor's own feed: a few entries of
  // exactly this time.
  ReadOptions read;
  read.limit = 16;
  read.min_ts = entry.ts;
  read.max_ts = entry.ts;
  read.hydrate = true;
  if (absl::StatusOr<Page> page = feeds_->ReadOwn(entry.actor, read);
      page.ok()) {
    for (StoredEntry& own : page->entries) {
      if (own.activity_id == entry.activity_id) {
        stored = std::move(own);
        break;
      }
    }
  }
  std::string body;
  RespWriter writer(&body, kBodyProtocol);
  // FEED.READ's entry without WITHEDITS: a subscription takes no read
  // options.
  WriteStoredEntry(writer, stored, names_, false);
  return body;
}

void PubSubHub::Delivered(absl::Span<const EntityId> timelines,
                          const TimelineEntry& entry) {
  if (feed_channels_.load(std::memory_order_relaxed) == 0) return;
  std::vector<std::pair<std::string, Sinks>> targets;
  {
    internal::ReaderLock lock(&mu_);
    if (feeds_ == nullptr || timelines_.empty()) return;
    for (const EntityId owner : timelines) {
      auto it = timelines_.find(owner);
      if (it == timelines_.end()) continue;
      for (const std::string& channel : it->second) {
        targets.emplace_back(channel, channels_.at(channel).sinks);
      }
    }
  }
  if (targets.empty()) return;
  const std::string body = EntryBody(entry);
  for (const auto& [channel, sinks] : targets) {
    PushMessage(sinks, channel, body);
  }
}

void PubSubHub::Notified(EntityId recipient, const NotificationCounts& counts) {
  if (feed_channels_.load(std::memory_order_relaxed) == 0) return;
  std::vector<std::pair<std::string, Sinks>> targets;
  {
    internal::ReaderLock lock(&mu_);
    auto it = notifications_.find(recipient);
    if (it == notifications_.end()) return;
    for (const std::string& channel : it->second) {
      targets.emplace_back(channel, channels_.at(channel).sinks);
    }
  }
  std::string body;
  RespWriter writer(&body, kBodyProtocol);
  writer.ArrayHeader(3);
  writer.Integer(static_cast<int64_t>(counts.unseen));
  writer.Integer(static_cast<int64_t>(counts.unread));
  writer.Integer(static_cast<int64_t>(counts.groups));
  for (const auto& [channel, sinks] : targets) {
    PushMessage(sinks, channel, body);
  }
}

PubSubMembership::PubSubMembership(PubSubMembership&& other) noexcept
    : hub_(std::exchange(other.hub_, nullptr)),
      sink_(std::move(other.sink_)),
      channels_(std::move(other.channels_)),
      patterns_(std::move(other.patterns_)) {
  other.channels_.clear();
  other.patterns_.clear();
}

PubSubMembership& PubSubMembership::operator=(
    PubSubMembership&& other) noexcept {
  if (this != &other) {
    Clear();
    hub_ = std::exchange(other.hub_, nullptr);
    sink_ = std::move(other.sink_);
    channels_ = std::move(other.channels_);
    patterns_ = std::move(other.patterns_);
    other.channels_.clear();
    other.patterns_.clear();
  }
  return *this;
}

bool PubSubMembership::Subscribe(const std::string& channel,
                                 std::optional<FeedChannel> feed) {
  if (!channels_.insert(channel).second) return false;
  hub_->Subscribe(sink_, channel, feed);
  return true;
}

bool PubSubMembership::Unsubscribe(const std::string& channel) {
  if (channels_.erase(channel) == 0) return false;
  hub_->Unsubscribe(sink_.get(), channel);
  return true;
}

bool PubSubMembership::SubscribePattern(const std::string& pattern) {
  if (!patterns_.insert(pattern).second) return false;
  hub_->SubscribePattern(sink_, pattern);
  return true;
}

bool PubSubMembership::UnsubscribePattern(const std::string& pattern) {
  if (patterns_.erase(pattern) == 0) return false;
  hub_->UnsubscribePattern(sink_.get(), pattern);
  return true;
}

std::vector<std::string> PubSubMembership::channels() const {
  return {channels_.begin(), channels_.end()};
}

std::vector<std::string> PubSubMembership::patterns() const {
  return {patterns_.begin(), patterns_.end()};
}

void PubSubMembership::Clear() {
  if (hub_ == nullptr) return;
  for (const std::string& channel : channels_) {
    hub_->Unsubscribe(sink_.get(), channel);
  }
  for (const std::string& pattern : patterns_) {
    hub_->UnsubscribePattern(sink_.get(), pattern);
  }
  channels_.clear();
  patterns_.clear();
}

}  // namespace feedcore::server
