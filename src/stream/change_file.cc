// Change files (see change_file.h).
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
#include "feedcore/change_file.h"

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

#include "absl/strings/str_cat.h"
#include "base/byte_codec.h"
#include "base/durable_file.h"
#include "base/io_error.h"

namespace feedcore {
namespace {

using internal::ByteReader;
using internal::ByteWriter;
using internal::IoError;
using internal::WriteAll;

constexpr char kMagic[8] = {'F', 'E', 'E', 'D', 'L', 'O', 'G', '\0'};
// Version 2 added the entry's group key.
constexpr uint32_t kFormatVersion = 2;
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4;
constexpr size_t kFrameHeaderBytes = 4 + 8;
constexpr uint64_t kChecksumSeed = 0x666565646c6f6731ULL;
// A body is at least its fixed-size fields.
constexpr size_t kMinBodyBytes = 8 + 8 + 1 + 4 + 1 + 1 + 1 + 8 + 8 + 8 +
                                 (8 + 8 + 8 + 8 + 8) + 8 + 8 + 8 + (8 + 1 + 8) +
                                 8 + 8;

uint64_t Checksum(std::string_view bytes) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), kChecksumSeed);
}

std::string Header() {
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

// Reads all of `fd` (size `size`) into `out`.
absl::Status ReadAll(int fd, const std::string& path, uint64_t size,
                     std::string* out) {
  out->resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t got =
        ::pread(fd, out->data() + done, size - done, static_cast<off_t>(done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return IoError("reading", path, errno);
    }
    if (got == 0) break;  // shrank meanwhile: read what is there
    done += static_cast<size_t>(got);
  }
  out->resize(done);
  return absl::OkStatus();
}

absl::Status CheckHeader(std::string_view bytes, const std::string& path) {
  if (bytes.size() < kHeaderBytes ||
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

// Reads all of `fd` into `out`.
absl::Status ReadFile(int fd, const std::string& path, std::string* out) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return IoError("reading", path, errno);
  return ReadAll(fd, path, static_cast<uint64_t>(st.st_size), out);
}

// Checks the header and every frame of `bytes`; decodes the records into
// `records` if it is not null. `*clean_end` is where the last whole frame
// ends; `*torn` says whether an incomplete frame follows it.
absl::Status ScanFrames(std::string_view bytes, const std::string& path,
                        std::vector<ChangeRecord>* records, size_t* clean_end,
                        bool* torn) {
  if (absl::Status s = CheckHeader(bytes, path); !s.ok()) return s;
  *torn = false;
  size_t offset = kHeaderBytes;
  while (offset < bytes.size()) {
    const size_t left = bytes.size() - offset;
    if (left < kFrameHeaderBytes) {
      *torn = true;
      break;
    }
    ByteReader frame(bytes.substr(offset, kFrameHeaderBytes));
    const uint32_t length = frame.U32();
    const uint64_t checksum = frame.U64();
    if (length > left - kFrameHeaderBytes) {
      *torn = true;
      break;
    }
    const std::string_view body =
        bytes.substr(offset + kFrameHeaderBytes, length);
    const bool last = offset + kFrameHeaderBytes + length == bytes.size();
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
    if (records != nullptr) records->push_back(std::move(record));
    offset += kFrameHeaderBytes + length;
  }
  *clean_end = offset;
  return absl::OkStatus();
}

class FileWriter final : public ChangeFileWriter {
 public:
  FileWriter(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~FileWriter() override { ::close(fd_); }

  absl::Status Append(absl::Span<const ChangeRecordPtr> records) override {
    if (broken_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "change file ", path_,
          ": an earlier append failed and could not be undone; reopen it"));
    }
    buffer_.clear();
    std::string body;
    for (const ChangeRecordPtr& record : records) {
      if (record == nullptr) {
        return absl::InvalidArgumentError(
            "ChangeFileWriter::Append: a record pointer is null");
      }
      body.clear();
      EncodeBody(*record, &body);
      if (body.size() > std::numeric_limits<uint32_t>::max()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ChangeFileWriter::Append: record ", record->sequence, " is ",
            body.size(), " bytes; a frame holds at most 4 GiB"));
      }
      ByteWriter frame(&buffer_);
      frame.U32(static_cast<uint32_t>(body.size()));
      frame.U64(Checksum(body));
      buffer_.append(body);
    }
    const uint64_t before = size_;
    if (absl::Status error = WriteAll(fd_, buffer_, path_, "appending to");
        !error.ok()) {
      // Cut the partial frames off, so that later appends follow whole
      // frames.
      if (::ftruncate(fd_, static_cast<off_t>(before)) != 0) broken_ = true;
      return error;
    }
    size_ += buffer_.size();
    return absl::OkStatus();
  }

  absl::Status Sync() override {
    if (::fdatasync(fd_) != 0) return IoError("flushing", path_, errno);
    return absl::OkStatus();
  }

  uint64_t size() const override { return size_; }

 private:
  const std::string path_;
  const int fd_;
  uint64_t size_;
  bool broken_ = false;
  std::string buffer_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ChangeFileWriter>> ChangeFileWriter::Open(
    const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("ChangeFileWriter::Open: empty path");
  }
  const int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("opening", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return IoError("reading", path, err);
  }
  auto fail = [fd](absl::Status status) {
    ::close(fd);
    return status;
  };
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    const std::string header = Header();
    if (absl::Status s = WriteAll(fd, header, path, "writing the header of");
        !s.ok()) {
      return fail(s);
    }
    size = header.size();
  } else {
    // A torn last frame (a crash mid-append) is cut off, so that new frames
    // follow whole ones.
    std::string bytes;
    if (absl::Status s = ReadFile(fd, path, &bytes); !s.ok()) return fail(s);
    size_t clean_end = 0;
    bool torn = false;
    if (absl::Status s = ScanFrames(bytes, path, nullptr, &clean_end, &torn);
        !s.ok()) {
      return fail(s);
    }
    if (torn && ::ftruncate(fd, static_cast<off_t>(clean_end)) != 0) {
      return fail(IoError("cutting the torn end off", path, errno));
    }
    size = clean_end;
  }
  return std::unique_ptr<ChangeFileWriter>(new FileWriter(path, fd, size));
}

absl::StatusOr<ChangeFileContents> ReadChangeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("opening", path, errno);
  std::string bytes;
  absl::Status read = ReadFile(fd, path, &bytes);
  ::close(fd);
  if (!read.ok()) return read;
  ChangeFileContents contents;
  size_t clean_end = 0;
  if (absl::Status s = ScanFrames(bytes, path, &contents.records, &clean_end,
                                  &contents.torn_tail);
      !s.ok()) {
    return s;
  }
  return contents;
}

}  // namespace feedcore
