// Snapshot files: writing them safely and reading them defensively.
//
//   header   "FEEDSNAP" | u32 version | u32 sections | u64 flags (0)
//            | u64 XXH3 of the 24 bytes before
//   section  u32 type | u32 index | u64 length | u64 XXH3 of payload
//            | payload
// Sections, in this order: kOptions (u64 shards, u64 max_timeline_length,
// u64 world_timeline_length, u64 notifications.max_length), one kDomain per
// domain in index order (u64 cut, then FeedEngineImpl::SerializeDomain's
// bytes), kRegistry (u64 cut, u64 next generation, u64 boards, then per board:
// name, u64 generation, u64 partitions, u8 tie-break, u64 max_page_size, u8
// score order, u8 rank style, u64 max_metadata_bytes, u64 next update
// sequence), one kPartition per partition of each board in that
// order (u64 cut, then LeaderboardImpl::SerializePartition's bytes), with a
// name registry kNames (u64 cut, then NameRegistryAccess::Serialize's
// bytes), kTrailer (u64 sequence, u64 domains, u64 boards). A snapshot
// without kNames loads with an empty name registry.
#include "feedcore/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/byte_codec.h"
#include "base/durable_file.h"
#include "base/io_error.h"
#include "contract/feed_arguments.h"
#include "contract/leaderboard_arguments.h"
#include "feed/feed_engine_impl.h"
#include "leaderboard/leaderboard_impl.h"
#include "leaderboard/leaderboard_registry_access.h"
#include "names/name_registry_access.h"

namespace feedcore {
namespace {

using internal::ByteReader;
using internal::ByteWriter;
using internal::DurableFileWriter;
using internal::FeedCaps;
using internal::FeedCapsOf;
using internal::FeedEngineImpl;
using internal::IoError;
using internal::LeaderboardImpl;
using internal::NameRegistryAccess;
using internal::RegistryAccess;

constexpr char kMagic[8] = {'F', 'E', 'E', 'D', 'S', 'N', 'A', 'P'};
// Version 2 added the group key of every timeline entry; version 3 the
// notification feeds (their seen groups, and each activity's recipients);
// version 4 the boards' score order, rank style and metadata limit, and
// their members' metadata; version 5 the chat and social state of graph
// nodes and activities; version 6 the dormant merges and followers of
// inactive readers (feed_snapshot.cc); version 7 the edits of activities
// and the pins of own feeds; version 8 the mentions of graph nodes;
// version 9 the reactions of activities; version 10 the activity kind of
// every activity and timeline entry; version 11 the kinds of follows.
constexpr uint32_t kFormatVersion = 13;
constexpr size_t kHeaderBytes = 32;
constexpr size_t kSectionHeaderBytes = 24;
constexpr uint64_t kChecksumSeed = 0x66656564736e6170ULL;

enum SectionType : uint32_t {
  kOptions = 1,
  kDomain = 2,
  kTrailer = 3,
  kRegistry = 4,
  kPartition = 5,
  kNames = 6,
};
// Bytes of a board's entry in the registry section with an empty name.
constexpr size_t kBoardEntryBytes = 8 + 8 + 8 + 1 + 8 + 1 + 1 + 8 + 8;

uint64_t Checksum(std::string_view bytes) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), kChecksumSeed);
}

std::string SectionHeader(uint32_t type, uint32_t index,
                          std::string_view payload) {
  std::string header;
  ByteWriter w(&header);
  w.U32(type);
  w.U32(index);
  w.U64(payload.size());
  w.U64(Checksum(payload));
  return header;
}

// Reads a whole file section by section, never trusting a length it has
// not checked against the bytes left.
class SnapshotFile {
 public:
  explicit SnapshotFile(std::string path) : path_(std::move(path)) {}
  ~SnapshotFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  absl::Status Open() {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return IoError("opening", path_, errno);
    struct stat st;
    if (::fstat(fd_, &st) != 0) return IoError("reading", path_, errno);
    size_ = static_cast<uint64_t>(st.st_size);
    return absl::OkStatus();
  }

  // Reads exactly `n` bytes (n <= what is left, checked by callers).
  absl::Status Read(size_t n, std::string* out) {
    out->resize(n);
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::read(fd_, out->data() + done, n - done);
      if (got < 0) {
        if (errno == EINTR) continue;
        return IoError("reading", path_, errno);
      }
      if (got == 0) return Truncated("the file ended early");
      done += static_cast<size_t>(got);
    }
    offset_ += n;
    return absl::OkStatus();
  }

  uint64_t left() const { return size_ - offset_; }
  uint64_t size() const { return size_; }

  absl::Status Truncated(absl::string_view where) const {
    return absl::DataLossError(absl::StrCat(
        "snapshot ", path_, " is truncated (", size_, " bytes): ", where));
  }
  absl::Status Damaged(absl::string_view what) const {
    return absl::DataLossError(
        absl::StrCat("snapshot ", path_, " is damaged: ", what));
  }
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
};

struct Section {
  uint32_t type = 0;
  uint32_t index = 0;
  std::string payload;
};

absl::Status ReadSection(SnapshotFile& file, size_t number, Section* out) {
  std::string header;
  if (file.left() < kSectionHeaderBytes) {
    return file.Truncated(absl::StrCat("section ", number, " header"));
  }
  if (absl::Status s = file.Read(kSectionHeaderBytes, &header); !s.ok()) {
    return s;
  }
  ByteReader r(header);
  out->type = r.U32();
  out->index = r.U32();
  const uint64_t length = r.U64();
  const uint64_t checksum = r.U64();
  if (length > file.left()) {
    return file.Truncated(absl::StrCat("section ", number, " claims ", length,
                                       " bytes but only ", file.left(),
                                       " remain"));
  }
  if (absl::Status s = file.Read(length, &out->payload); !s.ok()) return s;
  if (Checksum(out->payload) != checksum) {
    return file.Damaged(absl::StrCat("section ", number, " (type ", out->type,
                                     ", index ", out->index,
                                     ") fails its checksum"));
  }
  return absl::OkStatus();
}

// What a snapshot holds of one board: where each partition's copy was cut.
struct BoardCuts {
  std::vector<uint64_t> partitions;
};

class ReplicaImpl final : public Replica {
 public:
  ReplicaImpl(std::unique_ptr<FeedEngineImpl> engine,
              std::unique_ptr<LeaderboardRegistry> boards,
              std::unique_ptr<NameRegistry> names,
              std::vector<uint64_t> domain_cuts, uint64_t registry_cut,
              absl::flat_hash_map<uint64_t, BoardCuts> board_cuts,
              uint64_t names_cut, uint64_t sequence)
      : engine_(std::move(engine)),
        boards_(std::move(boards)),
        names_(std::move(names)),
        domain_cuts_(std::move(domain_cuts)),
        registry_cut_(registry_cut),
        board_cuts_(std::move(board_cuts)),
        names_cut_(names_cut),
        sequence_(sequence) {}

  InProcessFeedEngine& engine() override { return *engine_; }
  LeaderboardRegistry& boards() override { return *boards_; }
  NameRegistry& names() override { return *names_; }
  uint64_t sequence() const override { return sequence_; }
  uint64_t applied() const override { return applied_; }
  uint64_t skipped() const override { return skipped_; }
  uint64_t write_group_tag() const override { return write_group_tag_; }

  absl::Status Apply(const ChangeRecord& record) override {
    if (last_ == 0) {
      if (record.sequence == 0 || record.sequence > sequence_) {
        return absl::InvalidArgumentError(absl::StrCat(
            "replica: the first record applied is ", record.sequence,
            ", but replay must start at or before ", sequence_,
            " (the snapshot's sequence); records in between are missing"));
      }
    } else if (record.sequence != last_ + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replica: record ", record.sequence, " follows ", last_,
          record.sequence <= last_ ? " (out of order)" : " (records missing)"));
    }
    absl::StatusOr<bool> applied =
        record.kind == ChangeKind::kWriteGroupTag ? ApplyWriteGroupTag(record)
        : record.kind == ChangeKind::kNameAssign  ? ApplyToNames(record)
        : IsLeaderboardRecord(record)             ? ApplyToBoards(record)
                                                  : ApplyToEngine(record);
    if (!applied.ok()) return applied.status();
    ++(*applied ? applied_ : skipped_);
    last_ = record.sequence;
    return absl::OkStatus();
  }

 private:
  static bool IsLeaderboardRecord(const ChangeRecord& r) {
    return (r.kind >= ChangeKind::kBoardCreate &&
            r.kind <= ChangeKind::kBoardClear) ||
           r.kind == ChangeKind::kBoardRename;
  }

  // True if applied, false if skipped (the snapshot holds it).
  absl::StatusOr<bool> ApplyToEngine(const ChangeRecord& record) {
    if (record.domain >= domain_cuts_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replica: record ", record.sequence, " names domain ", record.domain,
          "; the source has ", domain_cuts_.size()));
    }
    if (record.sequence < domain_cuts_[record.domain]) return false;
    if (absl::Status s = engine_->ApplyChange(record); !s.ok()) return s;
    return true;
  }

  // Every tag counts, even one the snapshot's cuts precede: a tag is only
  // ever raised, and the snapshot does not hold it.
  absl::StatusOr<bool> ApplyWriteGroupTag(const ChangeRecord& r) {
    if (r.update_sequence == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replica: write-group record ", r.sequence, " has no tag"));
    }
    write_group_tag_ = std::max(write_group_tag_, r.update_sequence);
    return true;
  }

  absl::StatusOr<bool> ApplyToNames(const ChangeRecord& r) {
    if (r.sequence < names_cut_) return false;
    if (absl::Status s = NameRegistryAccess::Install(*names_, r.name, r.entity);
        !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replica: record ", r.sequence, " does not apply: ", s.message()));
    }
    return true;
  }

  absl::StatusOr<bool> ApplyToBoards(const ChangeRecord& r) {
    if (absl::Status s = internal::ValidateLeaderboardName(r.board); !s.ok()) {
      return s;
    }
    if (r.kind == ChangeKind::kBoardRename) {
      if (r.sequence < registry_cut_) return false;
      if (absl::Status s = internal::ValidateLeaderboardName(r.name); !s.ok()) {
        return s;
      }
      RegistryAccess::Rename(*boards_, r.board, r.board_generation, r.name);
      return true;
    }
    if (r.kind == ChangeKind::kBoardCreate ||
        r.kind == ChangeKind::kBoardDrop) {
      if (r.sequence < registry_cut_) return false;
      if (r.kind == ChangeKind::kBoardDrop) {
        RegistryAccess::Drop(*boards_, r.board, r.board_generation);
        return true;
      }
      if (absl::Status s =
              internal::ValidateLeaderboardOptions(r.board_options);
          !s.ok()) {
        return s;
      }
      RegistryAccess::Install(*boards_, r.board, r.board_options,
                              r.board_generation, /*record=*/true);
      return true;
    }
    // A board dropped (or replaced) since: its records change nothing.
    std::shared_ptr<LeaderboardImpl> board =
        RegistryAccess::Find(*boards_, r.board, r.board_generation);
    if (board == nullptr) return false;
    if (r.domain >= board->options().partitions ||
        (r.kind != ChangeKind::kBoardClear &&
         board->PartitionOf(r.entity) != r.domain)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replica: record ", r.sequence, " names partition ", r.domain,
          " of board \"", r.board, "\", which does not hold it"));
    }
    if (r.metadata.has_value() &&
        (r.kind != ChangeKind::kScoreSet ||
         r.metadata->size() > board->options().max_metadata_bytes ||
         board->options().max_metadata_bytes == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replica: record ", r.sequence, " carries ", r.metadata->size(),
          " bytes of metadata for board \"", r.board, "\", which keeps ",
          board->options().max_metadata_bytes, " bytes per member"));
    }
    auto cuts = board_cuts_.find(r.board_generation);
    if (cuts != board_cuts_.end() &&
        r.sequence < cuts->second.partitions[r.domain]) {
      return false;
    }
    switch (r.kind) {
      case ChangeKind::kScoreSet:
        board->ApplyScore(r.entity, r.score, r.update_sequence,
                          r.metadata ? &*r.metadata : nullptr);
        break;
      case ChangeKind::kScoreRemove:
        board->ApplyRemove(r.entity);
        break;
      default:
        board->ApplyClear(r.domain);
        break;
    }
    return true;
  }

  const std::unique_ptr<FeedEngineImpl> engine_;
  const std::unique_ptr<LeaderboardRegistry> boards_;
  const std::unique_ptr<NameRegistry> names_;
  const std::vector<uint64_t> domain_cuts_;
  const uint64_t registry_cut_;
  // By board generation.
  const absl::flat_hash_map<uint64_t, BoardCuts> board_cuts_;
  // 0: the snapshot had no names section; every name record applies.
  const uint64_t names_cut_;
  const uint64_t sequence_;
  uint64_t last_ = 0;
  uint64_t applied_ = 0;
  uint64_t skipped_ = 0;
  uint64_t write_group_tag_ = 0;
};

absl::Status CheckOption(absl::string_view name, uint64_t want, uint64_t have) {
  if (want == have) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the snapshot was taken with ", name, " = ", want,
      "; create the engine with the same value (EngineOptions has ", have,
      ")"));
}

}  // namespace

absl::StatusOr<SnapshotInfo> SaveSnapshot(const InProcessFeedEngine& engine,
                                          const std::string& path,
                                          const LeaderboardRegistry* boards,
                                          const NameRegistry* names) {
  // FeedEngineImpl is the only class that derives from InProcessFeedEngine.
  const FeedEngineImpl* impl = static_cast<const FeedEngineImpl*>(&engine);
  if (path.empty()) {
    return absl::InvalidArgumentError("SaveSnapshot: the path is empty");
  }
  if (boards != nullptr && RegistryAccess::log(*boards) != impl->change_log()) {
    return absl::InvalidArgumentError(
        "SaveSnapshot: the engine and the leaderboard registry must record "
        "into the same change stream, or both into none; a replica replays "
        "one stream");
  }
  if (names != nullptr &&
      NameRegistryAccess::log(*names) != impl->change_log()) {
    return absl::InvalidArgumentError(
        "SaveSnapshot: the engine and the name registry must record into "
        "the same change stream, or both into none; a replica replays one "
        "stream");
  }
  const EngineOptions& options = impl->options();
  const size_t domains = impl->domain_count();
  std::vector<RegistryAccess::BoardRef> listed;
  uint64_t registry_cut = 0;
  uint64_t next_generation = 1;
  size_t partitions = 0;
  if (boards != nullptr) {
    next_generation = RegistryAccess::NextGeneration(*boards);
    registry_cut = RegistryAccess::List(*boards, &listed);
    for (const auto& ref : listed)
      partitions += ref.board->options().partitions;
  }
  absl::StatusOr<DurableFileWriter> created = DurableFileWriter::Create(path);
  if (!created.ok()) return created.status();
  DurableFileWriter& file = *created;

  std::string bytes;
  ByteWriter header(&bytes);
  for (char c : kMagic) header.U8(static_cast<uint8_t>(c));
  header.U32(kFormatVersion);
  header.U32(static_cast<uint32_t>(domains + partitions + 3 + (names ? 1 : 0)));
  header.U64(0);
  header.U64(Checksum(bytes));
  if (absl::Status s = file.Append(bytes); !s.ok()) return s;

  auto write_section = [&](uint32_t type, uint32_t index,
                           const std::string& payload) {
    if (absl::Status s = file.Append(SectionHeader(type, index, payload));
        !s.ok()) {
      return s;
    }
    return file.Append(payload);
  };
  std::string payload;
  ByteWriter sizing(&payload);
  sizing.U64(options.shards);
  sizing.U64(options.max_timeline_length);
  sizing.U64(options.world_timeline_length);
  sizing.U64(options.notifications.max_length);
  if (absl::Status s = write_section(kOptions, 0, payload); !s.ok()) return s;

  // Each copy is cut at the log's position when its lock was taken; the
  // cut goes in front of the copy's bytes.
  uint64_t sequence = std::numeric_limits<uint64_t>::max();
  auto cut_copy = [&](auto&& copy) {
    payload.assign(8, '\0');
    const uint64_t cut = copy(&payload);
    std::string cut_bytes;
    ByteWriter(&cut_bytes).U64(cut);
    payload.replace(0, 8, cut_bytes);
    sequence = std::min(sequence, cut);
  };
  for (size_t d = 0; d < domains; ++d) {
    cut_copy([&](std::string* out) { return impl->SerializeDomain(d, out); });
    if (absl::Status s =
            write_section(kDomain, static_cast<uint32_t>(d), payload);
        !s.ok()) {
      return s;
    }
  }
  payload.clear();
  ByteWriter registry(&payload);
  registry.U64(registry_cut);
  registry.U64(next_generation);
  registry.U64(listed.size());
  for (const auto& ref : listed) {
    const LeaderboardOptions& o = ref.board->options();
    registry.Bytes(ref.name);
    registry.U64(ref.generation);
    registry.U64(o.partitions);
    registry.U8(o.tie_break == TieBreak::kEarlierUpdateFirst ? 0 : 1);
    registry.U64(o.max_page_size);
    registry.U8(static_cast<uint8_t>(o.score_order));
    registry.U8(static_cast<uint8_t>(o.rank_style));
    registry.U64(o.max_metadata_bytes);
    registry.U64(ref.board->next_update_sequence());
  }
  // 0: a registry that records nothing (or none) puts no bound on replay.
  if (registry_cut != 0) sequence = std::min(sequence, registry_cut);
  if (absl::Status s = write_section(kRegistry, 0, payload); !s.ok()) return s;
  const internal::ChangeLog* board_log =
      boards != nullptr ? RegistryAccess::log(*boards) : nullptr;
  uint32_t index = 0;
  for (const auto& ref : listed) {
    for (size_t p = 0; p < ref.board->options().partitions; ++p) {
      cut_copy([&](std::string* out) {
        return ref.board->SerializePartition(p, board_log, out);
      });
      if (absl::Status s = write_section(kPartition, index++, payload);
          !s.ok()) {
        return s;
      }
    }
  }
  if (names != nullptr) {
    payload.assign(8, '\0');
    const uint64_t names_cut = NameRegistryAccess::Serialize(*names, &payload);
    std::string cut_bytes;
    ByteWriter(&cut_bytes).U64(names_cut);
    payload.replace(0, 8, cut_bytes);
    if (names_cut != 0) sequence = std::min(sequence, names_cut);
    if (absl::Status s = write_section(kNames, 0, payload); !s.ok()) return s;
  }
  payload.clear();
  ByteWriter trailer(&payload);
  trailer.U64(sequence);
  trailer.U64(domains);
  trailer.U64(listed.size());
  if (absl::Status s = write_section(kTrailer, 0, payload); !s.ok()) return s;
  if (absl::Status s = file.Commit(); !s.ok()) return s;
  return SnapshotInfo{sequence, file.written()};
}

absl::StatusOr<std::unique_ptr<Replica>> LoadSnapshot(const std::string& path,
                                                      EngineOptions options) {
  SnapshotFile file(path);
  if (absl::Status s = file.Open(); !s.ok()) return s;
  std::string header;
  if (file.left() < kHeaderBytes) return file.Truncated("header");
  if (absl::Status s = file.Read(kHeaderBytes, &header); !s.ok()) return s;
  if (std::memcmp(header.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        " is not a feedcore snapshot (its first bytes are not FEEDSNAP)"));
  }
  ByteReader r(std::string_view(header).substr(sizeof(kMagic)));
  const uint32_t version = r.U32();
  const uint32_t sections = r.U32();
  const uint64_t flags = r.U64();
  const uint64_t checksum = r.U64();
  if (Checksum(std::string_view(header).substr(0, 24)) != checksum) {
    return file.Damaged("the header fails its checksum");
  }
  if (version != kFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("snapshot ", path, " has format version ", version,
                     "; this build reads version ", kFormatVersion));
  }
  if (flags != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "snapshot ", path, " uses format flags ", flags, " this build lacks"));
  }
  if (sections < 5 || sections > file.size() / kSectionHeaderBytes) {
    return file.Damaged(absl::StrCat("it claims ", sections, " sections"));
  }

  Section section;
  if (absl::Status s = ReadSection(file, 0, &section); !s.ok()) return s;
  ByteReader sizing(section.payload);
  const uint64_t shards = sizing.U64();
  const uint64_t max_timeline_length = sizing.U64();
  const uint64_t world_timeline_length = sizing.U64();
  const uint64_t notification_length = sizing.U64();
  if (section.type != kOptions || section.index != 0 || !sizing.ok() ||
      !sizing.at_end()) {
    return file.Damaged("the first section is not the options section");
  }
  if (shards == 0 || shards > kMaxShards || sections < 2 * shards + 3) {
    return file.Damaged(absl::StrCat("it claims ", shards, " shards and ",
                                     sections, " sections"));
  }
  if (options.shards == 0) options.shards = shards;
  if (absl::Status s = CheckOption("shards", shards, options.shards); !s.ok()) {
    return s;
  }
  // The caps may differ: a timeline over a smaller one keeps its newest
  // entries (LoadDomain).
  const FeedCaps saved_caps = FeedCapsOf(
      max_timeline_length, world_timeline_length, notification_length);
  absl::StatusOr<EngineOptions> resolved =
      internal::ResolveEngineOptions(std::move(options));
  if (!resolved.ok()) return resolved.status();
  auto engine = std::make_unique<FeedEngineImpl>(*std::move(resolved));
  FeedEngineImpl* const impl = engine.get();

  const size_t domains = impl->domain_count();
  std::vector<uint64_t> cuts(domains);
  uint64_t min_cut = std::numeric_limits<uint64_t>::max();
  for (size_t d = 0; d < domains; ++d) {
    if (absl::Status s = ReadSection(file, d + 1, &section); !s.ok()) return s;
    if (section.type != kDomain || section.index != d) {
      return file.Damaged(absl::StrCat("section ", d + 1, " should be domain ",
                                       d, " but is type ", section.type,
                                       ", index ", section.index));
    }
    ByteReader cut(section.payload);
    cuts[d] = cut.U64();
    if (!cut.ok()) return file.Damaged(absl::StrCat("domain ", d, " is empty"));
    min_cut = std::min(min_cut, cuts[d]);
    if (absl::Status s = impl->LoadDomain(
            d, std::string_view(section.payload).substr(sizeof(uint64_t)),
            saved_caps);
        !s.ok()) {
      return file.Damaged(s.message());
    }
  }
  size_t number = domains + 1;
  if (absl::Status s = ReadSection(file, number++, &section); !s.ok()) {
    return s;
  }
  if (section.type != kRegistry || section.index != 0) {
    return file.Damaged("the leaderboard registry section is missing");
  }
  auto boards =
      std::make_unique<LeaderboardRegistry>(impl->options().change_stream);
  ByteReader registry(section.payload);
  const uint64_t registry_cut = registry.U64();
  uint64_t next_generation = registry.U64();
  const uint64_t board_count = registry.Count(kBoardEntryBytes);
  if (registry_cut != 0) min_cut = std::min(min_cut, registry_cut);
  struct Listed {
    std::shared_ptr<LeaderboardImpl> board;
    uint64_t generation;
  };
  std::vector<Listed> listed;
  listed.reserve(board_count);
  uint64_t partition_sections = 0;
  for (uint64_t b = 0; b < board_count && registry.ok(); ++b) {
    const std::string name(registry.Bytes());
    const uint64_t generation = registry.U64();
    LeaderboardOptions o;
    o.partitions = registry.U64();
    const uint8_t tie_break = registry.U8();
    o.tie_break = tie_break == 0 ? TieBreak::kEarlierUpdateFirst
                                 : TieBreak::kLowerMemberFirst;
    o.max_page_size = registry.U64();
    o.score_order = static_cast<ScoreOrder>(registry.U8());
    o.rank_style = static_cast<RankStyle>(registry.U8());
    o.max_metadata_bytes = registry.U64();
    const uint64_t next_update = registry.U64();
    if (!registry.ok()) break;
    if (absl::Status s = internal::ValidateLeaderboardName(name); !s.ok()) {
      return file.Damaged(absl::StrCat("board ", b, ": ", s.message()));
    }
    if (absl::Status s = internal::ValidateLeaderboardOptions(o);
        !s.ok() || tie_break > 1) {
      return file.Damaged(
          absl::StrCat("board \"", name, "\" has invalid options"));
    }
    if (RegistryAccess::Find(*boards, name, generation) != nullptr ||
        generation == 0) {
      return file.Damaged(absl::StrCat(
          "board \"", name, "\" is listed twice or has generation 0"));
    }
    partition_sections += o.partitions;
    if (partition_sections > sections) {
      return file.Damaged("the boards have more partitions than sections");
    }
    listed.push_back({RegistryAccess::Install(*boards, name, o, generation,
                                              /*record=*/false),
                      generation});
    (void)next_update;  // the partitions' update sequences restore it
    next_generation = std::max(next_generation, generation + 1);
  }
  if (!registry.ok() || !registry.at_end()) {
    return file.Damaged("the leaderboard registry section is malformed");
  }
  const bool has_names = sections == domains + 4 + partition_sections;
  if (sections != domains + 3 + partition_sections && !has_names) {
    return file.Damaged(absl::StrCat("it claims ", sections,
                                     " sections, but its contents need ",
                                     domains + 3 + partition_sections));
  }
  RegistryAccess::ReserveGenerations(*boards, next_generation);
  absl::flat_hash_map<uint64_t, BoardCuts> board_cuts;
  uint32_t index = 0;
  for (const Listed& entry : listed) {
    BoardCuts& cuts_of_board = board_cuts[entry.generation];
    for (size_t p = 0; p < entry.board->options().partitions; ++p) {
      if (absl::Status s = ReadSection(file, number++, &section); !s.ok()) {
        return s;
      }
      if (section.type != kPartition || section.index != index++) {
        return file.Damaged(absl::StrCat("section ", number - 1,
                                         " should be a leaderboard partition"));
      }
      ByteReader cut(section.payload);
      const uint64_t partition_cut = cut.U64();
      if (!cut.ok()) return file.Damaged("a leaderboard partition is empty");
      cuts_of_board.partitions.push_back(partition_cut);
      min_cut = std::min(min_cut, partition_cut);
      if (absl::Status s = entry.board->LoadPartition(
              p, std::string_view(section.payload).substr(sizeof(uint64_t)));
          !s.ok()) {
        return file.Damaged(s.message());
      }
    }
  }
  auto names = std::make_unique<NameRegistry>(impl->options().change_stream);
  uint64_t names_cut = 0;
  if (has_names) {
    if (absl::Status s = ReadSection(file, number++, &section); !s.ok()) {
      return s;
    }
    ByteReader cut(section.payload);
    names_cut = cut.U64();
    if (section.type != kNames || section.index != 0 || !cut.ok()) {
      return file.Damaged(
          absl::StrCat("section ", number - 1, " should be the name registry"));
    }
    if (names_cut != 0) min_cut = std::min(min_cut, names_cut);
    if (absl::Status s = NameRegistryAccess::Load(
            *names, std::string_view(section.payload).substr(8));
        !s.ok()) {
      return file.Damaged(s.message());
    }
  }
  if (absl::Status s = ReadSection(file, number++, &section); !s.ok()) {
    return s;
  }
  ByteReader trailer(section.payload);
  const uint64_t sequence = trailer.U64();
  const uint64_t trailer_domains = trailer.U64();
  const uint64_t trailer_boards = trailer.U64();
  if (section.type != kTrailer || section.index != 0 || !trailer.ok() ||
      !trailer.at_end() || trailer_domains != domains ||
      trailer_boards != listed.size() || sequence != min_cut) {
    return file.Damaged("the trailer does not match the sections");
  }
  if (file.left() != 0) {
    return file.Damaged(
        absl::StrCat(file.left(), " unexpected bytes after the trailer"));
  }
  return std::unique_ptr<Replica>(new ReplicaImpl(
      std::move(engine), std::move(boards), std::move(names), std::move(cuts),
      registry_cut, std::move(board_cuts), names_cut, sequence));
}

}  // namespace feedcore
