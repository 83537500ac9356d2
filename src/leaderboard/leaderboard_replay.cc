// LeaderboardImpl's part of the change stream and of snapshots: recording
// changes, applying recorded ones, and copying partitions.
//
// A partition's snapshot bytes: u64 members, then per member (best first)
// u64 member, i64 score, u64 update sequence; then u64 members with
// metadata, then per such member (in the same order) u64 member, u64
// length, the bytes. Scores are scores, not rank scores: the bytes mean
// the same whatever the board's order. Records (ChangeRecord::score) carry
// scores too.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/byte_codec.h"
#include "leaderboard/distinct_score_index.h"
#include "leaderboard/leaderboard_impl.h"

namespace feedcore::internal {
namespace {

constexpr size_t kMemberBytes = 24;
// A member with metadata: id, length, at least one byte.
constexpr size_t kMinMetadataBytes = 8 + 8 + 1;

absl::Status Corrupt(size_t partition, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("leaderboard partition ", partition, ": ", what));
}

}  // namespace

void LeaderboardImpl::StartRecording(ChangeLog* log, std::string name,
                                     uint64_t generation) {
  recording_ =
      std::make_unique<Recording>(Recording{log, std::move(name), generation});
}

void LeaderboardImpl::RecordRename(std::string name)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  for (size_t p = 0; p < options_.partitions; ++p) partitions_[p].mu.Lock();
  ChangeRecord record;
  record.kind = ChangeKind::kBoardRename;
  record.board = recording_->name;
  record.board_generation = recording_->generation;
  record.name = name;
  recording_->log->Append(std::move(record));
  recording_->name = std::move(name);
  for (size_t p = options_.partitions; p-- > 0;) partitions_[p].mu.Unlock();
}

void LeaderboardImpl::Record(ChangeKind kind, size_t partition, MemberId member,
                             int64_t score, uint64_t update_sequence,
                             const std::string* metadata) const {
  ChangeRecord record;
  record.kind = kind;
  record.domain = static_cast<uint32_t>(partition);
  record.board = recording_->name;
  record.board_generation = recording_->generation;
  record.entity = member;
  record.score = score;
  record.update_sequence = update_sequence;
  if (metadata != nullptr) record.metadata = *metadata;
  recording_->log->Append(std::move(record));
}

void LeaderboardImpl::PlaceLocked(size_t p, PartitionData& data,
                                  MemberId member, const RankKey& key) {
  auto [it, inserted] = data.members.try_emplace(member, Placed{});
  if (inserted) {
    try {
      data.tree.Insert(key);
    } catch (...) {
      data.members.erase(it);
      throw;
    }
    it->second = Placed{key.score, key.seq};
    NoteTopChange(p, data, nullptr, &key);
    RankScoreMoved(std::nullopt, key.score);
  } else if (it->second.score != key.score || it->second.seq != key.seq) {
    const Placed old = it->second;
    const RankKey old_key{old.score, old.seq, member};
    data.tree.Update(old_key, key);
    it->second = Placed{key.score, key.seq};
    NoteTopChange(p, data, &old_key, &key);
    RankScoreMoved(old.score, key.score);
  }
}

void LeaderboardImpl::ApplyScore(MemberId member, int64_t score,
                                 uint64_t update_sequence,
                                 const std::string* metadata) {
  const size_t p = PartitionOf(member);
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  PlaceLocked(p, data, member,
              RankKey{ToRankScore(score), update_sequence, member});
  if (metadata != nullptr) {
    if (metadata->empty()) {
      data.metadata.erase(member);
    } else {
      data.metadata.insert_or_assign(member, *metadata);
    }
  }
  // Later local changes must rank after every replayed one.
  uint64_t seen = next_seq_.load(std::memory_order_relaxed);
  while (seen < update_sequence &&
         !next_seq_.compare_exchange_weak(seen, update_sequence,
                                          std::memory_order_relaxed)) {
  }
  if (recording_ != nullptr) {
    Record(ChangeKind::kScoreSet, p, member, score, update_sequence, metadata);
  }
}

void LeaderboardImpl::ApplyRemove(MemberId member) {
  const size_t p = PartitionOf(member);
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  auto it = data.members.find(member);
  if (it != data.members.end()) {
    const int64_t old_score = it->second.score;
    const RankKey old_key{old_score, it->second.seq, member};
    data.tree.Erase(old_key);
    data.members.erase(it);
    data.metadata.erase(member);
    NoteTopChange(p, data, &old_key, nullptr);
    RankScoreMoved(old_score, std::nullopt);
  }
  if (recording_ != nullptr) Record(ChangeKind::kScoreRemove, p, member, 0, 0);
}

void LeaderboardImpl::ApplyClear(size_t p) {
  auto empty = std::make_unique<PartitionData>(&leaf_pool_);
  {
    WriterLock lock(&partitions_[p].mu);
    // The other partitions keep their members, so the partition's scores
    // leave the index one member at a time.
    if (distinct_scores_ != nullptr) {
      for (const auto& [member, placed] : partitions_[p].data->members) {
        RankScoreMoved(placed.score, std::nullopt);
      }
    }
    partitions_[p].data.swap(empty);
    BumpTopVersion(p);
    if (recording_ != nullptr) Record(ChangeKind::kBoardClear, p, 0, 0, 0);
  }
  // The old data is freed here, after the lock.
}

uint64_t LeaderboardImpl::SerializePartition(size_t p, const ChangeLog* log,
                                             std::string* out) const {
  const Partition& partition = partitions_[p];
  ReaderLock lock(&partition.mu);
  const uint64_t cut = log != nullptr ? log->NextSequence() : 0;
  const PartitionData& data = *partition.data;
  ByteWriter w(out);
  out->reserve(out->size() + 16 + data.tree.size() * kMemberBytes);
  w.U64(data.tree.size());
  for (Position at = data.tree.First(); at.valid(); at = at.next()) {
    const RankKey key = at.key();
    w.U64(key.member);
    w.I64(ToScore(key.score));
    w.U64(key.seq);
  }
  // In the members' order rather than the map's, so that the same board
  // gives the same bytes.
  w.U64(data.metadata.size());
  if (!data.metadata.empty()) {
    for (Position at = data.tree.First(); at.valid(); at = at.next()) {
      const MemberId member = at.key().member;
      const auto it = data.metadata.find(member);
      if (it == data.metadata.end()) continue;
      w.U64(member);
      w.Bytes(it->second);
    }
  }
  return cut;
}

absl::Status LeaderboardImpl::LoadPartition(size_t p, std::string_view bytes) {
  ByteReader r(bytes);
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  const uint64_t count = r.Count(kMemberBytes);
  uint64_t max_seq = 0;
  for (uint64_t i = 0; i < count && r.ok(); ++i) {
    RankKey key;
    key.member = r.U64();
    key.score = ToRankScore(r.I64());
    key.seq = r.U64();
    if (!r.ok()) break;
    if (PartitionOf(key.member) != p) {
      return Corrupt(p, absl::StrCat("member ", key.member,
                                     " belongs to another partition"));
    }
    if (options_.tie_break == TieBreak::kLowerMemberFirst && key.seq != 0) {
      return Corrupt(p, "update sequence on a board ranked by member id");
    }
    if (data.members.contains(key.member)) {
      return Corrupt(p, absl::StrCat("member ", key.member, " appears twice"));
    }
    PlaceLocked(p, data, key.member, key);
    max_seq = std::max(max_seq, key.seq);
  }
  const uint64_t with_metadata = r.Count(kMinMetadataBytes);
  for (uint64_t i = 0; i < with_metadata && r.ok(); ++i) {
    const MemberId member = r.U64();
    const std::string_view metadata = r.Bytes();
    if (!r.ok()) break;
    if (!data.members.contains(member)) {
      return Corrupt(p, absl::StrCat("metadata of member ", member,
                                     ", which is not in the partition"));
    }
    if (metadata.empty() || metadata.size() > options_.max_metadata_bytes) {
      return Corrupt(
          p, absl::StrCat("metadata of member ", member, " is ",
                          metadata.size(), " bytes; the board keeps 1..",
                          options_.max_metadata_bytes));
    }
    if (!data.metadata.try_emplace(member, metadata).second) {
      return Corrupt(
          p, absl::StrCat("metadata of member ", member, " appears twice"));
    }
  }
  if (!r.ok() || !r.at_end()) {
    return Corrupt(p, "member data is truncated or too long");
  }
  uint64_t seen = next_seq_.load(std::memory_order_relaxed);
  while (seen < max_seq && !next_seq_.compare_exchange_weak(
                               seen, max_seq, std::memory_order_relaxed)) {
  }
  return absl::OkStatus();
}

}  // namespace feedcore::internal
