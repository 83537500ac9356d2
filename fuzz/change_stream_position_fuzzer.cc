// Fuzz target: change-stream positions and read sizes, the inputs a
// consumer chooses. The input is a program run against a stream with small
// retention (by count, sometimes by age) fed by an engine: append records,
// advance the stream's clock, open readers at any StreamPosition (any type
// value, any sequence), Read any number of records from any open reader,
// and Subscribe at any position with any batch size. Every answer is
// checked against the rules of change_stream.h, computed from the stream's
// Stats() just before the call:
//   * TRIM_HORIZON opens at the oldest retained record, LATEST at the next
//     one; AT(n) opens at n and AFTER(n) at n + 1, which is InvalidArgument
//     for 0 or beyond the next sequence (and AFTER of the largest value),
//     OutOfRange when retention dropped it; an unknown type is
//     InvalidArgument;
//   * Read(n) is InvalidArgument unless 1 <= n <= 100000; OutOfRange, with
//     the position unchanged, when retention passed the reader; otherwise
//     the records from the position on, consecutive, at most n, up to the
//     newest, and the position moves past them;
//   * a subscription delivers the same records in order from where it
//     opened;
//   * retention keeps at most max_records, the newest always, and
//     records + dropped account for every sequence written.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "fuzz_check.h"
#include "fuzz_input.h"

namespace feedcore::fuzz {
namespace {

constexpr size_t kMaxReadBatch = 100'000;
constexpr size_t kMaxReaders = 4;

// The first sequence a reader can still read.
uint64_t FirstReadable(const ChangeStreamStats& stats) {
  return stats.records == 0 ? stats.next_sequence : stats.oldest_sequence;
}

void CheckStats(const ChangeStreamStats& stats, size_t max_records) {
  FUZZ_CHECK(stats.records <= max_records);
  FUZZ_CHECK(stats.records + stats.dropped + 1 == stats.next_sequence);
  if (stats.records > 0) {
    FUZZ_CHECK(stats.oldest_sequence + stats.records == stats.next_sequence);
  }
}

StreamPosition RandomPosition(FuzzInput& in, const ChangeStreamStats& stats) {
  StreamPosition position;
  position.type = static_cast<StreamPosition::Type>(in.Below(5));
  const uint64_t first = FirstReadable(stats);
  switch (in.Below(6)) {
    case 0:
      position.sequence = first - in.Below(3);
      break;
    case 1:
      position.sequence = stats.next_sequence + in.Below(3) - 1;
      break;
    case 2:
      position.sequence = std::numeric_limits<uint64_t>::max() - in.Below(2);
      break;
    case 3:
      position.sequence = in.U64();
      break;
    default:
      position.sequence = in.Below(stats.next_sequence + 2);
      break;
  }
  return position;
}

// Where a reader at `position` opens, or the error it must get.
absl::StatusOr<uint64_t> Expected(StreamPosition position,
                                  const ChangeStreamStats& stats) {
  uint64_t sequence = position.sequence;
  switch (position.type) {
    case StreamPosition::Type::kTrimHorizon:
      return FirstReadable(stats);
    case StreamPosition::Type::kLatest:
      return stats.next_sequence;
    case StreamPosition::Type::kAtSequence:
      break;
    case StreamPosition::Type::kAfterSequence:
      if (sequence == std::numeric_limits<uint64_t>::max()) {
        return absl::InvalidArgumentError("after the largest");
      }
      ++sequence;
      break;
    default:
      return absl::InvalidArgumentError("unknown type");
  }
  if (sequence == 0 || sequence > stats.next_sequence) {
    return absl::InvalidArgumentError("not written");
  }
  if (sequence < FirstReadable(stats)) return absl::OutOfRangeError("gone");
  return sequence;
}

void CheckOpened(absl::Status got, const absl::StatusOr<uint64_t>& want) {
  FUZZ_CHECK(got.code() == want.status().code());
}

void CheckConsecutive(absl::Span<const ChangeRecordPtr> records,
                      uint64_t from) {
  for (size_t i = 0; i < records.size(); ++i) {
    FUZZ_CHECK(records[i] != nullptr);
    FUZZ_CHECK(records[i]->sequence == from + i);
  }
}

void Subscribe(ChangeStream& stream, FuzzInput& in) {
  const ChangeStreamStats stats = stream.Stats();
  const StreamPosition position = RandomPosition(in, stats);
  const size_t batch = in.Below(4) == 0 ? in.U64() : 1 + in.Below(8);
  const absl::StatusOr<uint64_t> want = Expected(position, stats);
  std::mutex mu;
  std::vector<ChangeRecordPtr> delivered;
  bool failed = false;
  absl::StatusOr<std::unique_ptr<Subscription>> subscription = stream.Subscribe(
      position, batch,
      [&](absl::Span<const ChangeRecordPtr> records) {
        std::lock_guard<std::mutex> lock(mu);
        FUZZ_CHECK(records.size() <= batch);
        delivered.insert(delivered.end(), records.begin(), records.end());
      },
      [&](const absl::Status&) {
        std::lock_guard<std::mutex> lock(mu);
        failed = true;
      });
  if (batch == 0 || batch > kMaxReadBatch) {
    FUZZ_CHECK(absl::IsInvalidArgument(subscription.status()));
    return;
  }
  CheckOpened(subscription.status(), want);
  if (!subscription.ok()) return;
  // Its thread may have delivered some records already.
  FUZZ_CHECK((*subscription)->position() >= *want);
  // Nothing is appended meanwhile, so it must catch up with the newest.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((*subscription)->position() < stats.next_sequence) {
    FUZZ_CHECK(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  subscription->reset();  // joins its thread
  FUZZ_CHECK(!failed);
  FUZZ_CHECK(delivered.size() == stats.next_sequence - *want);
  CheckConsecutive(delivered, *want);
}

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace feedcore;
  using namespace feedcore::fuzz;
  FuzzInput in(data, size);
  auto clock = std::make_shared<ManualClock>(1'000'000);
  ChangeStreamOptions stream_options;
  stream_options.max_records = 1 + in.Below(16);
  if (in.Below(4) == 0) stream_options.max_age = 1 + in.Below(50);
  stream_options.clock = clock;
  std::shared_ptr<ChangeStream> stream =
      ChangeStream::Create(stream_options).value();
  EngineOptions engine_options;
  engine_options.sweep_interval = 0;
  engine_options.fanout_threads = 0;
  engine_options.shards = 2;
  engine_options.clock = clock;
  engine_options.change_stream = stream;
  std::unique_ptr<InProcessFeedEngine> engine =
      FeedEngine::Create(engine_options).value();

  std::vector<std::unique_ptr<ChangeReader>> readers;
  Micros ts = 0;
  int subscriptions = 0;
  while (!in.empty()) {
    switch (in.Below(6)) {
      case 0: {  // append 1..8 records
        const uint64_t n = 1 + in.Below(8);
        for (uint64_t i = 0; i < n; ++i) {
          ++ts;
          const TimelineEntry entry{ts, static_cast<ActivityId>(ts), 7};
          FUZZ_CHECK(engine->Insert(1 + in.Below(3), entry).ok());
        }
        const ChangeStreamStats stats = stream->Stats();
        FUZZ_CHECK(stats.records >= 1);  // the newest is always kept
        break;
      }
      case 1:
        clock->Advance(static_cast<Micros>(in.Below(30)));
        break;
      case 2:
      case 3: {  // open a reader
        const ChangeStreamStats stats = stream->Stats();
        const StreamPosition position = RandomPosition(in, stats);
        const absl::StatusOr<uint64_t> want = Expected(position, stats);
        absl::StatusOr<std::unique_ptr<ChangeReader>> reader =
            stream->NewReader(position);
        CheckOpened(reader.status(), want);
        if (!reader.ok()) break;
        FUZZ_CHECK((*reader)->position() == *want);
        if (readers.size() == kMaxReaders) readers.erase(readers.begin());
        readers.push_back(*std::move(reader));
        break;
      }
      case 4: {  // read from an open reader
        if (readers.empty()) break;
        ChangeReader& reader = *readers[in.Below(readers.size())];
        size_t max = 1 + in.Below(10);
        if (in.Below(4) == 0) max = in.Below(3) == 0 ? in.U64() : 0;
        const ChangeStreamStats stats = stream->Stats();
        const uint64_t position = reader.position();
        const absl::StatusOr<std::vector<ChangeRecordPtr>> records =
            reader.Read(max);
        if (max == 0 || max > kMaxReadBatch) {
          FUZZ_CHECK(absl::IsInvalidArgument(records.status()));
          FUZZ_CHECK(reader.position() == position);
        } else if (position < FirstReadable(stats)) {
          FUZZ_CHECK(absl::IsOutOfRange(records.status()));
          FUZZ_CHECK(reader.position() == position);
        } else {
          FUZZ_CHECK(records.ok());
          const uint64_t available = stats.next_sequence - position;
          FUZZ_CHECK(records->size() == std::min<uint64_t>(max, available));
          CheckConsecutive(*records, position);
          FUZZ_CHECK(reader.position() == position + records->size());
        }
        break;
      }
      default:
        // Each subscription is a thread; a few per input are plenty.
        if (subscriptions++ < 2) Subscribe(*stream, in);
        break;
    }
    CheckStats(stream->Stats(), stream_options.max_records);
  }
  return 0;
}
