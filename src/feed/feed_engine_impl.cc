#include "feed/feed_engine_impl.h"

// XXH_INLINE_ALL: the hash of ShardIndex compiles to a few instructions.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <utility>

#include "contract/feed_arguments.h"

namespace feedcore {

absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> FeedEngine::Create(
    EngineOptions options) {
  absl::StatusOr<EngineOptions> resolved =
      internal::ResolveEngineOptions(std::move(options));
  if (!resolved.ok()) return resolved.status();
  return std::unique_ptr<InProcessFeedEngine>(
      new internal::FeedEngineImpl(*std::move(resolved)));
}

namespace internal {
namespace {

// Fixed so that runs are reproducible; heights only affect speed.
constexpr uint64_t kHeightSeed = 0x9e3779b97f4a7c15ULL;

ShardConfig ShardConfigOf(const EngineOptions& options, ChangeLog* log) {
  ShardConfig config;
  config.log = log;
  config.height_seed = kHeightSeed;
  config.caps =
      FeedCapsOf(options.max_timeline_length, options.world_timeline_length,
                 options.notifications.max_length);
  config.aggregation = options.aggregation.enabled;
  return config;
}

}  // namespace

FeedEngineImpl::FeedEngineImpl(EngineOptions options)
    : options_(std::move(options)),
      log_(ChangeStreamAccess::Log(options_.change_stream.get())),
      shards_(options_.shards, ShardConfigOf(options_, log_)),
      store_(options_.shards, log_, static_cast<uint32_t>(options_.shards)),
      deliveries_(options_.background_deliveries) {
  if (options_.fanout_threads > 0) {
    pool_ = std::make_unique<FanoutPool>(options_.fanout_threads,
                                         options_.fanout_queue_capacity);
  }
  if (options_.sweep_interval > 0) {
    const size_t budget = options_.sweep_budget;
    const bool release = options_.inactive_after > 0;
    sweeper_ = std::make_unique<Sweeper>(
        [this, budget, release] {
          const bool more_expired = *EvictExpiredInMemory(budget) == budget;
          return (release &&
                  *ReleaseInactiveReadersInMemory(budget) == budget) ||
                 more_expired;
        },
        std::chrono::microseconds(options_.sweep_interval));
  }
}

FeedEngineImpl::~FeedEngineImpl() {
  deliveries_.Stop();  // no callback may call in while the engine goes
  sweeper_.reset();    // no pass may run while the shards are destroyed
  pool_.reset();       // runs what is still queued, then joins
}

size_t FeedEngineImpl::ShardIndex(EntityId entity) const {
  // Every put, read and fan-out step routes through here: the hash is
  // inlined for its fixed 8 bytes, and a power-of-two shard count (the
  // default) takes a mask instead of a division. Both give exactly
  // XXH3_64bits(entity) % shards, which the change stream and snapshots
  // record.
  const uint64_t hash = XXH3_64bits(&entity, sizeof(entity));
  const size_t shards = options_.shards;
  return (shards & (shards - 1)) == 0 ? hash & (shards - 1) : hash % shards;
}

}  // namespace internal
}  // namespace feedcore
