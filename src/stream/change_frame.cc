// Change-file frames (see change_frame.h).
//
//   header  "FEEDLOG" \0 | u32 version
//   frame   u32 body length | u64 XXH3 of body | body
//   body    u64 sequence, i64 time, u8 kind, u32 domain, u8 feed, u8 mode,
//           u8 merged_at_read, u64 entity, u64 other, u64 n + n owners,
//           entry (i64 ts, u64 activity id, u64 actor, i64 expires_at,
//           u64 group, bytes payload), u64 n + n keys (i64 ts, u64 activity
//           id), bytes board, u64 board generation, board options (u64
//           partitions, u8 tie-break, u64 max_page_size), i64 score,
//           u64 update sequence
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
// Version 2 added the entry's group key.
constexpr uint32_t kFormatVersion = 2;
constexpr uint64_t kChecksumSeed = 0x666565646c6f6731ULL;
// A body is at least its fixed-size fields.
constexpr size_t kMinBodyBytes = 8 + 8 + 1 + 4 + 1 + 1 + 1 + 8 + 8 + 8 +
                                 (8 + 8 + 8 + 8 + 8) + 8 + 8 + 8 + (8 + 1 + 8) +
                                 8 + 8;

uint64_t Checksum(std::string_view bytes) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), kChecksumSeed);
}

std::string HeaderBytes() {
  std::string header(kMagic, sizeof(kMagic));
  ByteWriter(&header).U32(kFormatVersion);
  return header;
}

void EncodeBody(const ChangeRecord& r, std::string* out) {
  ByteWriter w(out);
  w.U64(r.sequence);
  w.I64(r.time);
  w.U8(static_cast<uint8_t>(r.kind));
  w.U32(r.domain);
  w.U8(static_cast<uint8_t>(r.feed));
  w.U8(static_cast<uint8_t>(r.mode));
  w.U8(r.merged_at_read ? 1 : 0);
  w.U64(r.entity);
  w.U64(r.other);
  w.U64(r.owners.size());
  for (const EntityId owner : r.owners) w.U64(owner);
  w.I64(r.entry.ts);
  w.U64(r.entry.activity_id);
  w.U64(r.entry.actor);
  w.I64(r.entry.expires_at);
  w.U64(r.entry.group);
  w.Bytes(r.entry.payload);
  w.U64(r.keys.size());
  for (const EntryKey& key : r.keys) {
    w.I64(key.ts);
    w.U64(key.activity_id);
  }
  w.Bytes(r.board);
  w.U64(r.board_generation);
  w.U64(r.board_options.partitions);
  w.U8(r.board_options.tie_break == TieBreak::kEarlierUpdateFirst ? 0 : 1);
  w.U64(r.board_options.max_page_size);
  w.I64(r.score);
  w.U64(r.update_sequence);
}

// False if `body` is not a well-formed record (values are checked for range
// here; whether they make sense is Replica::Apply's business).
bool DecodeBody(std::string_view body, ChangeRecord* r) {
  ByteReader in(body);
  r->sequence = in.U64();
  r->time = in.I64();
  const uint8_t kind = in.U8();
  r->domain = in.U32();
  const uint8_t feed = in.U8();
  const uint8_t mode = in.U8();
  const uint8_t merged = in.U8();
  r->entity = in.U64();
  r->other = in.U64();
  const uint64_t owners = in.Count(sizeof(EntityId));
  r->owners.reserve(owners);
  for (uint64_t i = 0; i < owners; ++i) r->owners.push_back(in.U64());
  r->entry.ts = in.I64();
  r->entry.activity_id = in.U64();
  r->entry.actor = in.U64();
  r->entry.expires_at = in.I64();
  r->entry.group = in.U64();
  r->entry.payload = std::string(in.Bytes());
  const uint64_t keys = in.Count(16);
  r->keys.reserve(keys);
  for (uint64_t i = 0; i < keys; ++i) {
    EntryKey key;
    key.ts = in.I64();
    key.activity_id = in.U64();
    r->keys.push_back(key);
  }
  r->board = std::string(in.Bytes());
  r->board_generation = in.U64();
  r->board_options.partitions = in.U64();
  const uint8_t tie_break = in.U8();
  r->board_options.max_page_size = in.U64();
  r->score = in.I64();
  r->update_sequence = in.U64();
  if (!in.ok() || !in.at_end()) return false;
  if (kind < static_cast<uint8_t>(ChangeKind::kTimelinePut) ||
      kind > static_cast<uint8_t>(ChangeKind::kNotificationRead) ||
      feed > static_cast<uint8_t>(FeedType::kNotification) ||
      mode > static_cast<uint8_t>(ActorMode::kMerged) || merged > 1 ||
      tie_break > 1) {
    return false;
  }
  r->kind = static_cast<ChangeKind>(kind);
  r->feed = static_cast<FeedType>(feed);
  r->mode = static_cast<ActorMode>(mode);
  r->merged_at_read = merged == 1;
  r->board_options.tie_break = tie_break == 0 ? TieBreak::kEarlierUpdateFirst
                                              : TieBreak::kLowerMemberFirst;
  return true;
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
  const std::string_view body(out->data() + start + kChangeFrameHeaderBytes,
                              body_size);
  std::string frame_header;
  ByteWriter w(&frame_header);
  w.U32(static_cast<uint32_t>(body_size));
  w.U64(Checksum(body));
  std::memcpy(out->data() + start, frame_header.data(), frame_header.size());
  return true;
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
  if (version != kFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("change file ", path, " has format version ", version,
                     "; this build reads version ", kFormatVersion));
  }
  return absl::OkStatus();
}

absl::Status ScanChangeFrames(
    std::string_view bytes, const std::string& path,
    const std::function<absl::Status(ChangeRecord&&, size_t offset)>& on_record,
    size_t* clean_end, bool* torn) {
  if (absl::Status s = CheckChangeFileHeader(bytes, path); !s.ok()) return s;
  *torn = false;
  size_t offset = kChangeFileHeaderBytes;
  while (offset < bytes.size()) {
    const size_t left = bytes.size() - offset;
    if (left < kChangeFrameHeaderBytes) {
      *torn = true;
      break;
    }
    ByteReader frame(bytes.substr(offset, kChangeFrameHeaderBytes));
    const uint32_t length = frame.U32();
    const uint64_t checksum = frame.U64();
    if (length > left - kChangeFrameHeaderBytes) {
      *torn = true;
      break;
    }
    const std::string_view body =
        bytes.substr(offset + kChangeFrameHeaderBytes, length);
    const bool last = offset + kChangeFrameHeaderBytes + length == bytes.size();
    if (Checksum(body) != checksum) {
      if (last) {
        *torn = true;
        break;
      }
      return absl::DataLossError(absl::StrCat("change file ", path,
                                              " is damaged: the frame at byte ",
                                              offset, " fails its checksum"));
    }
    ChangeRecord record;
    if (length < kMinBodyBytes || !DecodeBody(body, &record)) {
      return absl::DataLossError(
          absl::StrCat("change file ", path, " is damaged: the frame at byte ",
                       offset, " does not hold a valid record"));
    }
    if (on_record) {
      if (absl::Status s = on_record(std::move(record), offset); !s.ok()) {
        return s;
      }
    }
    offset += kChangeFrameHeaderBytes + length;
  }
  *clean_end = offset;
  return absl::OkStatus();
}

}  // namespace feedcore::internal
