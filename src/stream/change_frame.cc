// Change-file frames (see change_frame.h).
//
//   header  "FEEDLOG" \0 | u32 version (3)
//   frame   u32 body length | u64 XXH3 of body | body
//   body    u8 kind | var field mask | var sequence | zigzag time |
//           then, in the order of the Field bits below, each field whose
//           bit is set: integers as LEB128 varints (zigzag for signed
//           ones), the enumerations as u8, strings as a varint length and
//           the bytes, lists as a varint count and the items
//
// Fields added to version 3 take new bits: a file that uses them is
// refused by a build that does not know them (an unknown bit is a damaged
// frame), never misread, and files without them read as before.
#include "stream/change_frame.h"

#include <xxhash.h>

#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/byte_codec.h"

namespace feedcore::internal {
namespace {

constexpr char kMagic[8] = {'F', 'E', 'E', 'D', 'L', 'O', 'G', '\0'};
constexpr uint64_t kChecksumSeed = 0x666565646c6f6731ULL;
// Kind, field mask, sequence, time: one byte each at least.
constexpr size_t kMinBodyBytes = 4;

// The fields of a version 3 body that are written only when they differ
// from ChangeRecord's defaults, one bit each in the body's field mask.
enum Field : uint32_t {
  kDomain = 1u << 0,
  kFeed = 1u << 1,
  kMode = 1u << 2,
  kMergedAtRead = 1u << 3,  // no bytes: the bit is the value
  kEntity = 1u << 4,
  kOther = 1u << 5,
  kOwners = 1u << 6,
  kEntryTs = 1u << 7,
  kEntryActivity = 1u << 8,
  kEntryActor = 1u << 9,
  kEntryExpiresAt = 1u << 10,
  kEntryGroup = 1u << 11,
  kEntryPayload = 1u << 12,
  kKeys = 1u << 13,
  kBoard = 1u << 14,
  kBoardGeneration = 1u << 15,
  kBoardOptions = 1u << 16,
  kScore = 1u << 17,
  kUpdateSequence = 1u << 18,
  // The metadata of a score-set record; its absence (unchanged metadata)
  // differs from an empty string (none).
  kMetadata = 1u << 19,
  // The board options after the first three: u8 score order, u8 rank
  // style, var max_metadata_bytes.
  kBoardScoring = 1u << 20,
  // An activity's counters: var count, then each as a zigzag varint.
  kCounters = 1u << 21,
  // The name of a name-assignment record.
  kName = 1u << 22,
  // When an activity's payload was last edited (StoredEntry::edited_at).
  kEntryEditedAt = 1u << 23,
  // The entry's activity kind (StoredEntry::kind): one byte, at most
  // kMaxActivityKind.
  kEntryKind = 1u << 24,
  kAllFields = (1u << 25) - 1,
};

// Whether the options of kBoardOptions, and those of kBoardScoring, differ
// from the defaults.
bool HasBoardPlacement(const LeaderboardOptions& o) {
  static const LeaderboardOptions none;
  return o.partitions != none.partitions || o.tie_break != none.tie_break ||
         o.max_page_size != none.max_page_size;
}
bool HasBoardScoring(const LeaderboardOptions& o) {
  static const LeaderboardOptions none;
  return o.score_order != none.score_order || o.rank_style != none.rank_style ||
         o.max_metadata_bytes != none.max_metadata_bytes;
}

uint32_t FieldsOf(const ChangeRecord& r) {
  static const ChangeRecord none;  // immutable: the defaults to compare to
  uint32_t mask = 0;
  auto set = [&mask](bool present, Field field) {
    if (present) mask |= field;
  };
  set(r.domain != none.domain, kDomain);
  set(r.feed != none.feed, kFeed);
  set(r.mode != none.mode, kMode);
  set(r.merged_at_read, kMergedAtRead);
  set(r.entity != none.entity, kEntity);
  set(r.other != none.other, kOther);
  set(!r.owners.empty(), kOwners);
  set(r.entry.ts != none.entry.ts, kEntryTs);
  set(r.entry.activity_id != none.entry.activity_id, kEntryActivity);
  set(r.entry.actor != none.entry.actor, kEntryActor);
  set(r.entry.expires_at != none.entry.expires_at, kEntryExpiresAt);
  set(r.entry.group != none.entry.group, kEntryGroup);
  set(!r.entry.payload.empty(), kEntryPayload);
  set(!r.keys.empty(), kKeys);
  set(!r.board.empty(), kBoard);
  set(r.board_generation != none.board_generation, kBoardGeneration);
  set(HasBoardPlacement(r.board_options), kBoardOptions);
  set(HasBoardScoring(r.board_options), kBoardScoring);
  set(r.score != none.score, kScore);
  set(r.update_sequence != none.update_sequence, kUpdateSequence);
  set(r.metadata.has_value(), kMetadata);
  set(!r.counters.empty(), kCounters);
  set(!r.name.empty(), kName);
  set(r.entry.edited_at != none.entry.edited_at, kEntryEditedAt);
  set(r.entry.kind != none.entry.kind, kEntryKind);
  return mask;
}

uint64_t Checksum(std::string_view bytes) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), kChecksumSeed);
}

std::string HeaderBytes() {
  std::string header(kMagic, sizeof(kMagic));
  ByteWriter(&header).U32(kChangeFileFormatVersion);
  return header;
}

// Counts the bytes a body takes: EncodeFields with it sizes the output
// exactly, so the bytes are written once and never zero-filled beyond them.
class BodySizer {
 public:
  void U8(uint8_t) { ++size_; }
  void Var(uint64_t v) {
    size_ += 1 + (v >= (uint64_t{1} << 7)) + (v >= (uint64_t{1} << 14)) +
             (v >= (uint64_t{1} << 21)) + (v >= (uint64_t{1} << 28)) +
             (v >= (uint64_t{1} << 35)) + (v >= (uint64_t{1} << 42)) +
             (v >= (uint64_t{1} << 49)) + (v >= (uint64_t{1} << 56)) +
             (v >= (uint64_t{1} << 63));
  }
  void VarSigned(int64_t v) { Var(ZigZag(v)); }
  void VarBytes(std::string_view bytes) {
    Var(bytes.size());
    size_ += bytes.size();
  }
  static uint64_t ZigZag(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  }
  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
};

// Writes a body straight into bytes already sized for it.
class BodyWriter {
 public:
  explicit BodyWriter(char* at) : at_(at) {}

  void U8(uint8_t v) { *at_++ = static_cast<char>(v); }
  void Var(uint64_t v) {
    while (v >= 0x80) {
      *at_++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *at_++ = static_cast<char>(v);
  }
  void VarSigned(int64_t v) { Var(BodySizer::ZigZag(v)); }
  void VarBytes(std::string_view bytes) {
    Var(bytes.size());
    std::memcpy(at_, bytes.data(), bytes.size());
    at_ += bytes.size();
  }

 private:
  char* at_;
};

template <typename Writer>
void EncodeFields(const ChangeRecord& r, uint32_t mask, Writer& w);

void EncodeBody(const ChangeRecord& r, std::string* out) {
  const uint32_t mask = FieldsOf(r);
  BodySizer sizer;
  EncodeFields(r, mask, sizer);
  const size_t start = out->size();
  out->resize(start + sizer.size());
  BodyWriter writer(out->data() + start);
  EncodeFields(r, mask, writer);
}

template <typename Writer>
void EncodeFields(const ChangeRecord& r, uint32_t mask, Writer& w) {
  w.U8(static_cast<uint8_t>(r.kind));
  w.Var(mask);
  w.Var(r.sequence);
  w.VarSigned(r.time);
  if (mask & kDomain) w.Var(r.domain);
  if (mask & kFeed) w.U8(static_cast<uint8_t>(r.feed));
  if (mask & kMode) w.U8(static_cast<uint8_t>(r.mode));
  if (mask & kEntity) w.Var(r.entity);
  if (mask & kOther) w.Var(r.other);
  if (mask & kOwners) {
    w.Var(r.owners.size());
    for (const EntityId owner : r.owners) w.Var(owner);
  }
  if (mask & kEntryTs) w.VarSigned(r.entry.ts);
  if (mask & kEntryActivity) w.Var(r.entry.activity_id);
  if (mask & kEntryActor) w.Var(r.entry.actor);
  if (mask & kEntryExpiresAt) w.VarSigned(r.entry.expires_at);
  if (mask & kEntryGroup) w.Var(r.entry.group);
  if (mask & kEntryPayload) w.VarBytes(r.entry.payload);
  if (mask & kKeys) {
    w.Var(r.keys.size());
    for (const EntryKey& key : r.keys) {
      w.VarSigned(key.ts);
      w.Var(key.activity_id);
    }
  }
  if (mask & kBoard) w.VarBytes(r.board);
  if (mask & kBoardGeneration) w.Var(r.board_generation);
  if (mask & kBoardOptions) {
    w.Var(r.board_options.partitions);
    w.U8(r.board_options.tie_break == TieBreak::kEarlierUpdateFirst ? 0 : 1);
    w.Var(r.board_options.max_page_size);
  }
  if (mask & kScore) w.VarSigned(r.score);
  if (mask & kUpdateSequence) w.Var(r.update_sequence);
  if (mask & kMetadata) w.VarBytes(*r.metadata);
  if (mask & kBoardScoring) {
    w.U8(static_cast<uint8_t>(r.board_options.score_order));
    w.U8(static_cast<uint8_t>(r.board_options.rank_style));
    w.Var(r.board_options.max_metadata_bytes);
  }
  if (mask & kCounters) {
    w.Var(r.counters.size());
    for (const int64_t counter : r.counters) w.VarSigned(counter);
  }
  if (mask & kName) w.VarBytes(r.name);
  if (mask & kEntryEditedAt) w.VarSigned(r.entry.edited_at);
  if (mask & kEntryKind) w.U8(r.entry.kind);
}

// Range checks of the small enumerations.
bool SetEnums(uint8_t kind, uint8_t feed, uint8_t mode, uint8_t tie_break,
              ChangeRecord* r) {
  if (kind < static_cast<uint8_t>(ChangeKind::kTimelinePut) ||
      kind > static_cast<uint8_t>(ChangeKind::kListMemberRemove) ||
      feed > static_cast<uint8_t>(FeedType::kNotification) ||
      mode > static_cast<uint8_t>(ActorMode::kMerged) || tie_break > 1) {
    return false;
  }
  r->kind = static_cast<ChangeKind>(kind);
  r->feed = static_cast<FeedType>(feed);
  r->mode = static_cast<ActorMode>(mode);
  r->board_options.tie_break = tie_break == 0 ? TieBreak::kEarlierUpdateFirst
                                              : TieBreak::kLowerMemberFirst;
  return true;
}

// False if `body` is not a well-formed record (values are checked for range
// here; whether they make sense is Replica::Apply's business).
bool DecodeBody(std::string_view body, ChangeRecord* r) {
  ByteReader in(body);
  const uint8_t kind = in.U8();
  const uint64_t mask = in.Var();
  if (!in.ok() || (mask & ~uint64_t{kAllFields}) != 0) return false;
  r->sequence = in.Var();
  r->time = in.VarSigned();
  uint8_t feed = static_cast<uint8_t>(r->feed);
  uint8_t mode = static_cast<uint8_t>(r->mode);
  uint8_t tie_break =
      r->board_options.tie_break == TieBreak::kEarlierUpdateFirst ? 0 : 1;
  if (mask & kDomain) {
    const uint64_t domain = in.Var();
    if (domain > std::numeric_limits<uint32_t>::max()) return false;
    r->domain = static_cast<uint32_t>(domain);
  }
  if (mask & kFeed) feed = in.U8();
  if (mask & kMode) mode = in.U8();
  r->merged_at_read = (mask & kMergedAtRead) != 0;
  if (mask & kEntity) r->entity = in.Var();
  if (mask & kOther) r->other = in.Var();
  if (mask & kOwners) {
    const uint64_t owners = in.VarCount(1);
    r->owners.reserve(owners);
    for (uint64_t i = 0; i < owners; ++i) r->owners.push_back(in.Var());
  }
  if (mask & kEntryTs) r->entry.ts = in.VarSigned();
  if (mask & kEntryActivity) r->entry.activity_id = in.Var();
  if (mask & kEntryActor) r->entry.actor = in.Var();
  if (mask & kEntryExpiresAt) r->entry.expires_at = in.VarSigned();
  if (mask & kEntryGroup) r->entry.group = in.Var();
  if (mask & kEntryPayload) r->entry.payload = std::string(in.VarBytes());
  if (mask & kKeys) {
    const uint64_t keys = in.VarCount(2);
    r->keys.reserve(keys);
    for (uint64_t i = 0; i < keys; ++i) {
      EntryKey key;
      key.ts = in.VarSigned();
      key.activity_id = in.Var();
      r->keys.push_back(key);
    }
  }
  if (mask & kBoard) r->board = std::string(in.VarBytes());
  if (mask & kBoardGeneration) r->board_generation = in.Var();
  if (mask & kBoardOptions) {
    r->board_options.partitions = in.Var();
    tie_break = in.U8();
    r->board_options.max_page_size = in.Var();
  }
  if (mask & kScore) r->score = in.VarSigned();
  if (mask & kUpdateSequence) r->update_sequence = in.Var();
  if (mask & kMetadata) r->metadata = std::string(in.VarBytes());
  if (mask & kBoardScoring) {
    const uint8_t score_order = in.U8();
    const uint8_t rank_style = in.U8();
    r->board_options.max_metadata_bytes = in.Var();
    if (score_order > static_cast<uint8_t>(ScoreOrder::kLowerFirst) ||
        rank_style > static_cast<uint8_t>(RankStyle::kDense)) {
      return false;
    }
    r->board_options.score_order = static_cast<ScoreOrder>(score_order);
    r->board_options.rank_style = static_cast<RankStyle>(rank_style);
  }
  if (mask & kCounters) {
    const uint64_t count = in.VarCount(1);
    r->counters.reserve(count);
    for (uint64_t i = 0; i < count; ++i) r->counters.push_back(in.VarSigned());
  }
  if (mask & kName) r->name = std::string(in.VarBytes());
  if (mask & kEntryEditedAt) r->entry.edited_at = in.VarSigned();
  if (mask & kEntryKind) {
    r->entry.kind = in.U8();
    if (r->entry.kind > kMaxActivityKind) return false;
  }
  if (!in.ok() || !in.at_end()) return false;
  return SetEnums(kind, feed, mode, tie_break, r);
}

}  // namespace

std::string ChangeFileHeader() { return HeaderBytes(); }

bool AppendChangeFrame(const ChangeRecord& record, std::string* out) {
  const size_t start = out->size();
  out->append(kChangeFrameHeaderBytes, '\0');
  EncodeBody(record, out);
  const size_t body_size = out->size() - start - kChangeFrameHeaderBytes;
  if (body_size > std::numeric_limits<uint32_t>::max()) {
    out->resize(start);
    return false;
  }
  char* frame = out->data() + start;
  const uint64_t checksum =
      Checksum(std::string_view(frame + kChangeFrameHeaderBytes, body_size));
  for (size_t i = 0; i < 4; ++i) {
    frame[i] = static_cast<char>((body_size >> (8 * i)) & 0xff);
  }
  for (size_t i = 0; i < 8; ++i) {
    frame[4 + i] = static_cast<char>((checksum >> (8 * i)) & 0xff);
  }
  return true;
}

void AppendBatchEnd(std::string* out) {
  const uint64_t checksum = Checksum(std::string_view());
  char frame[kChangeFrameHeaderBytes] = {};  // length 0
  for (size_t i = 0; i < 8; ++i) {
    frame[4 + i] = static_cast<char>((checksum >> (8 * i)) & 0xff);
  }
  out->append(frame, sizeof(frame));
}

absl::Status CheckChangeFileHeader(std::string_view bytes,
                                   const std::string& path) {
  if (bytes.size() < kChangeFileHeaderBytes ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     " is not a feedcore change file (its first bytes are not "
                     "FEEDLOG)"));
  }
  ByteReader r(bytes.substr(sizeof(kMagic), 4));
  const uint32_t version = r.U32();
  if (version != kChangeFileFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("change file ", path, " has format version ", version,
                     "; this build reads version ", kChangeFileFormatVersion));
  }
  return absl::OkStatus();
}

namespace {

// One frame at `offset` (< bytes.size()) of a file whose header was
// checked: what it is, and its size when it is whole.
enum class FrameKind {
  kRecord,
  kBatchEnd,
  kIncomplete,
  kBadChecksum,
  kBadBody
};
struct Frame {
  FrameKind kind = FrameKind::kIncomplete;
  size_t size = 0;      // header and body; 0 unless the length fits
  bool last = false;    // the file ends with this frame
  ChangeRecord record;  // kRecord only
};

Frame ReadFrame(std::string_view bytes, size_t offset) {
  Frame out;
  const size_t left = bytes.size() - offset;
  if (left < kChangeFrameHeaderBytes) return out;
  ByteReader header(bytes.substr(offset, kChangeFrameHeaderBytes));
  const uint32_t length = header.U32();
  const uint64_t checksum = header.U64();
  if (length > left - kChangeFrameHeaderBytes) return out;
  out.size = kChangeFrameHeaderBytes + length;
  out.last = out.size == left;
  const std::string_view body =
      bytes.substr(offset + kChangeFrameHeaderBytes, length);
  if (Checksum(body) != checksum) {
    out.kind = FrameKind::kBadChecksum;
  } else if (length == 0) {  // a batch end (see change_frame.h)
    out.kind = FrameKind::kBatchEnd;
  } else if (length < kMinBodyBytes || !DecodeBody(body, &out.record)) {
    out.kind = FrameKind::kBadBody;
  } else {
    out.kind = FrameKind::kRecord;
  }
  return out;
}

}  // namespace

absl::Status ScanChangeFrames(
    std::string_view bytes, const std::string& path,
    const std::function<absl::Status(ChangeRecord&&, size_t offset)>& on_record,
    size_t* clean_end, bool* torn,
    const std::function<absl::Status(size_t end)>& on_batch_end) {
  if (absl::Status s = CheckChangeFileHeader(bytes, path); !s.ok()) return s;
  *torn = false;
  size_t offset = kChangeFileHeaderBytes;
  while (offset < bytes.size()) {
    Frame frame = ReadFrame(bytes, offset);
    if (frame.kind == FrameKind::kIncomplete ||
        (frame.kind == FrameKind::kBadChecksum && frame.last)) {
      *torn = true;
      break;
    }
    if (frame.kind == FrameKind::kBadChecksum) {
      return absl::DataLossError(absl::StrCat("change file ", path,
                                              " is damaged: the frame at byte ",
                                              offset, " fails its checksum"));
    }
    if (frame.kind == FrameKind::kBadBody) {
      return absl::DataLossError(
          absl::StrCat("change file ", path, " is damaged: the frame at byte ",
                       offset, " does not hold a valid record"));
    }
    if (frame.kind == FrameKind::kBatchEnd) {
      offset += frame.size;
      if (on_batch_end) {
        if (absl::Status s = on_batch_end(offset); !s.ok()) return s;
      }
      continue;
    }
    if (on_record) {
      if (absl::Status s = on_record(std::move(frame.record), offset);
          !s.ok()) {
        return s;
      }
    }
    offset += frame.size;
  }
  *clean_end = offset;
  return absl::OkStatus();
}

absl::StatusOr<ChangeFrameReport> ReportChangeFrames(std::string_view bytes,
                                                     const std::string& path,
                                                     uint64_t first_sequence) {
  if (absl::Status s = CheckChangeFileHeader(bytes, path); !s.ok()) return s;
  ChangeFrameReport report;
  report.committed_end = kChangeFileHeaderBytes;
  size_t offset = kChangeFileHeaderBytes;
  uint64_t expected = first_sequence;
  while (offset < bytes.size()) {
    Frame frame = ReadFrame(bytes, offset);
    if (frame.kind == FrameKind::kIncomplete) {
      report.damage = bytes.size() - offset < kChangeFrameHeaderBytes
                          ? "incomplete frame header"
                          : "frame length runs past the end of the file";
      report.torn_tail = true;
      break;
    }
    if (frame.kind == FrameKind::kBadChecksum) {
      report.damage = "frame fails its checksum";
      report.torn_tail = frame.last;
      break;
    }
    if (frame.kind == FrameKind::kBadBody) {
      report.damage = "frame does not hold a valid record";
      break;
    }
    if (frame.kind == FrameKind::kRecord) {
      if (expected != 0 && frame.record.sequence != expected) {
        report.damage =
            absl::StrCat("record has sequence ", frame.record.sequence,
                         ", expected ", expected);
        break;
      }
      expected = frame.record.sequence + 1;
      if (report.records == 0) report.first_sequence = frame.record.sequence;
      report.last_sequence = frame.record.sequence;
      ++report.records;
    } else {
      ++report.batch_ends;
      report.committed_end = offset + frame.size;
      report.committed_records = report.records;
      report.committed_last_sequence = report.last_sequence;
    }
    offset += frame.size;
  }
  report.clean_end = offset;
  if (report.damage.empty()) return report;
  // What follows the damaged frame, walking the length fields while they
  // lead to frames whose checksums pass: a lower bound of what is lost.
  size_t next = offset;
  for (Frame frame = ReadFrame(bytes, next); frame.size != 0;) {
    next += frame.size;
    if (next >= bytes.size()) break;
    frame = ReadFrame(bytes, next);
    if (frame.kind == FrameKind::kRecord || frame.kind == FrameKind::kBadBody) {
      ++report.records_after;
    } else if (frame.kind != FrameKind::kBatchEnd) {
      break;
    }
  }
  return report;
}

}  // namespace feedcore::internal
