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

absl::Status PubSubHub::AttachFeeds(FeedEngine* feeds,
                                    const NameRegistry* names) {
  FeedDeliveries* deliveries = feeds->deliveries();
  if (deliveries == nullptr) {
    return absl::FailedPreconditionError(
        "the feed engine has no deliveries (FeedDeliveries): feed channels "
        "could push nothing");
  }
  SubscriptionOptions options;
  // Past a connection's own output buffer limit the connection closes; this
  // bound is only for a delivery thread that falls behind.
  options.queue_capacity = kMaxDeliveryQueueCapacity;
  options.callback = [this](const Delivery& delivery) { Delivered(delivery); };
  absl::StatusOr<SubscriptionId> subscription =
      deliveries->Subscribe(std::move(options));
  if (!subscription.ok()) return subscription.status();
  internal::WriterLock lock(&mu_);
  feeds_ = feeds;
  deliveries_ = deliveries;
  subscription_ = *subscription;
  names_ = names;
  return absl::OkStatus();
}

PubSubHub::FeedIndex& PubSubHub::IndexOf(FeedChannel::Kind kind) {
  return kind == FeedChannel::Kind::kTimeline ? timelines_ : notifications_;
}

absl::Status PubSubHub::WatchFeed(const FeedChannel& feed, bool watch) {
  if (deliveries_ == nullptr) return absl::OkStatus();  // no engine attached
  const WatchedFeed watched{feed.kind == FeedChannel::Kind::kTimeline
                                ? DeliveryFeed::kTimeline
                                : DeliveryFeed::kNotifications,
                            feed.entity};
  return (watch ? deliveries_->Watch(subscription_, watched)
                : deliveries_->Unwatch(subscription_, watched))
      .status();
}

absl::StatusOr<bool> PubSubHub::Subscribe(const std::shared_ptr<PushSink>& sink,
                                          const std::string& channel,
                                          std::optional<FeedChannel> feed) {
  internal::WriterLock lock(&mu_);
  auto found = channels_.find(channel);
  if (found != channels_.end()) {
    Channel& entry = found->second;
    if (HasSink(entry.sinks, sink.get())) return false;
    entry.sinks.push_back(sink);
    return true;
  }
  if (feed.has_value()) {
    std::vector<std::string>& named = IndexOf(feed->kind)[feed->entity];
    if (named.empty()) {
      if (absl::Status status = WatchFeed(*feed, true); !status.ok()) {
        IndexOf(feed->kind).erase(feed->entity);
        return status;
      }
    }
    named.push_back(channel);
  }
  Channel& entry = channels_[channel];
  entry.feed = feed;
  entry.sinks.push_back(sink);
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
    if (names.empty()) {
      index.erase(named);
      // Unwatching a watched feed of a live subscription cannot fail.
      WatchFeed(*feed, false).IgnoreError();
    }
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
  // FEED.READ's entry without WITHEDITS or WITHKINDS: a subscription takes
  // no read options.
  WriteStoredEntry(writer, stored, names_, EntryFields{});
  return body;
}

uint64_t PubSubHub::missed_deliveries() const {
  internal::ReaderLock lock(&mu_);
  if (deliveries_ == nullptr) return 0;
  absl::StatusOr<SubscriptionStats> stats =
      deliveries_->GetSubscriptionStats(subscription_);
  return stats.ok() ? stats->missed : 0;
}

void PubSubHub::Delivered(const Delivery& delivery) {
  const bool timeline = delivery.where.feed == DeliveryFeed::kTimeline;
  std::vector<std::pair<std::string, Sinks>> targets;
  {
    internal::ReaderLock lock(&mu_);
    const FeedIndex& index = timeline ? timelines_ : notifications_;
    auto it = index.find(delivery.where.owner);
    if (it == index.end()) return;  // unsubscribed since it was queued
    for (const std::string& channel : it->second) {
      targets.emplace_back(channel, channels_.at(channel).sinks);
    }
  }
  std::string counts;
  if (timeline) {
    if (last_body_id_ != delivery.entry.activity_id || last_body_.empty()) {
      last_body_ = EntryBody(delivery.entry);
      last_body_id_ = delivery.entry.activity_id;
    }
  } else {
    RespWriter writer(&counts, kBodyProtocol);
    writer.ArrayHeader(3);
    writer.Integer(static_cast<int64_t>(delivery.counts.unseen));
    writer.Integer(static_cast<int64_t>(delivery.counts.unread));
    writer.Integer(static_cast<int64_t>(delivery.counts.groups));
  }
  for (const auto& [channel, sinks] : targets) {
    PushMessage(sinks, channel, timeline ? last_body_ : counts);
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

absl::StatusOr<bool> PubSubMembership::Subscribe(
    const std::string& channel, std::optional<FeedChannel> feed) {
  if (channels_.contains(channel)) return false;
  absl::StatusOr<bool> subscribed = hub_->Subscribe(sink_, channel, feed);
  if (!subscribed.ok()) return subscribed.status();
  channels_.insert(channel);
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
