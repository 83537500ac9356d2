#include "names_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/durable_file.h"
#include "base/io_error.h"
#include "feedcore/leaderboard.h"

namespace feedcore::server {
namespace {

constexpr char kMagic[8] = {'F', 'C', 'N', 'A', 'M', 'J', 'L', '\0'};
// Version 1 is version 2 without groups: read, never written.
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4;
constexpr size_t kFrameHeaderBytes = 4 + 8;
// Different from every other checksum seed in the project (formats.md).
constexpr uint64_t kSeed = 0x66636e616d6a6c31;  // "fcnamjl1"

void PutU32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) {
    out.push_back(static_cast<char>(value >> (8 * i)));
  }
}

void PutU64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>(value >> (8 * i)));
  }
}

uint64_t GetFixed(absl::string_view bytes, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  }
  return value;
}

std::string Header() {
  std::string out(kMagic, sizeof(kMagic));
  PutU32(out, kVersion);
  return out;
}

// Decodes one record body; nullopt-like failure as DataLoss.
absl::StatusOr<NamesRecord> DecodeBody(absl::string_view body,
                                       uint64_t offset) {
  auto damaged = [offset](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("names journal record at byte ",
                                            offset, " is damaged: ", why));
  };
  NamesRecord record;
  if (body.size() < 1 + 4) return damaged("too short");
  const uint8_t type = static_cast<uint8_t>(body[0]);
  if (type < 1 || type > 7) return damaged(absl::StrCat("type ", type));
  record.type = static_cast<NamesRecordType>(type);
  const bool group = record.type == NamesRecordType::kGroupBegin ||
                     record.type == NamesRecordType::kGroupEnd;
  body.remove_prefix(1);
  const uint64_t key_length = GetFixed(body, 4);
  body.remove_prefix(4);
  if ((key_length == 0) != group || key_length > kMaxLeaderboardNameLength ||
      body.size() < key_length + 8 + 4) {
    return damaged("bad key length");
  }
  record.key = std::string(body.substr(0, key_length));
  body.remove_prefix(key_length);
  record.id = GetFixed(body, 8);
  body.remove_prefix(8);
  const uint64_t name_length = GetFixed(body, 4);
  body.remove_prefix(4);
  if (body.size() != name_length) return damaged("bad name length");
  record.name = std::string(body);
  if ((record.type == NamesRecordType::kAssign ||
       record.type == NamesRecordType::kFree) &&
      record.id == 0) {
    return damaged("member id 0");
  }
  if (group && (record.id == 0 || !record.name.empty())) {
    return damaged("bad group record");
  }
  if (record.type == NamesRecordType::kRename &&
      (record.name.empty() || record.name.size() > kMaxLeaderboardNameLength ||
       record.id == 0)) {
    return damaged("bad rename");
  }
  return record;
}

absl::Status Named(const absl::Status& status, const std::string& path) {
  return absl::Status(status.code(),
                      absl::StrCat(path, ": ", status.message()));
}

}  // namespace

std::string EncodeNamesFrame(const NamesRecord& record) {
  std::string body;
  body.push_back(static_cast<char>(record.type));
  PutU32(body, static_cast<uint32_t>(record.key.size()));
  body.append(record.key);
  PutU64(body, record.id);
  PutU32(body, static_cast<uint32_t>(record.name.size()));
  body.append(record.name);
  std::string frame;
  frame.reserve(kFrameHeaderBytes + body.size());
  PutU32(frame, static_cast<uint32_t>(body.size()));
  PutU64(frame, XXH3_64bits_withSeed(body.data(), body.size(), kSeed));
  frame.append(body);
  return frame;
}

namespace {

absl::Status CheckHeader(absl::string_view bytes) {
  if (bytes.size() < sizeof(kMagic) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError(
        "not a feedcore-server names journal (bad magic)");
  }
  if (bytes.size() < kHeaderBytes) {
    return absl::DataLossError("names journal is truncated in its header");
  }
  const uint64_t version = GetFixed(bytes.substr(sizeof(kMagic)), 4);
  if (version != kVersion && version != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("names journal has format version ", version,
                     "; this server reads versions 1 and ", kVersion));
  }
  return absl::OkStatus();
}

// The frame at `offset` (< bytes.size()): a record, a torn tail (a frame
// cut short, or a last frame failing its checksum: what a crash can
// leave), or damage (DataLoss naming the offset).
struct NamesFrame {
  enum class Kind { kRecord, kTorn, kDamaged } kind = Kind::kTorn;
  size_t size = 0;  // header and body; 0 unless the length fits
  NamesRecord record;
  absl::Status damage;
};

NamesFrame ReadNamesFrame(absl::string_view bytes, uint64_t offset) {
  NamesFrame frame;
  const absl::string_view rest = bytes.substr(offset);
  if (rest.size() < kFrameHeaderBytes) return frame;
  const uint64_t length = GetFixed(rest, 4);
  if (rest.size() - kFrameHeaderBytes < length) return frame;
  frame.size = kFrameHeaderBytes + length;
  const absl::string_view body = rest.substr(kFrameHeaderBytes, length);
  if (GetFixed(rest.substr(4), 8) !=
      XXH3_64bits_withSeed(body.data(), body.size(), kSeed)) {
    if (rest.size() == frame.size) return frame;
    frame.kind = NamesFrame::Kind::kDamaged;
    frame.damage = absl::DataLossError(
        absl::StrCat("names journal frame at byte ", offset,
                     " fails its checksum and is not the last one"));
    return frame;
  }
  absl::StatusOr<NamesRecord> record = DecodeBody(body, offset);
  if (!record.ok()) {
    frame.kind = NamesFrame::Kind::kDamaged;
    frame.damage = record.status();
    return frame;
  }
  frame.kind = NamesFrame::Kind::kRecord;
  frame.record = *std::move(record);
  return frame;
}

}  // namespace

absl::StatusOr<NamesJournalReport> ReportNamesJournal(absl::string_view bytes) {
  NamesJournalReport report;
  if (bytes.empty()) return report;  // what NamesJournal::Open starts anew
  if (absl::Status s = CheckHeader(bytes); !s.ok()) {
    if (s.code() != absl::StatusCode::kDataLoss) return s;
    report.damage = std::string(s.message());
    report.torn_tail = true;
    return report;
  }
  uint64_t offset = kHeaderBytes;
  while (offset < bytes.size()) {
    NamesFrame frame = ReadNamesFrame(bytes, offset);
    if (frame.kind != NamesFrame::Kind::kRecord) {
      report.torn_tail = frame.kind == NamesFrame::Kind::kTorn;
      report.damage = report.torn_tail
                          ? "the last frame is incomplete or fails its checksum"
                          : std::string(frame.damage.message());
      break;
    }
    offset += frame.size;
    ++report.records;
  }
  report.valid_bytes = offset;
  if (report.damage.empty()) return report;
  // Records after the damaged frame, following its length field while it
  // leads to whole frames: a lower bound of what is lost.
  for (NamesFrame frame = ReadNamesFrame(bytes, offset); frame.size != 0;) {
    offset += frame.size;
    if (offset >= bytes.size()) break;
    frame = ReadNamesFrame(bytes, offset);
    if (frame.kind == NamesFrame::Kind::kRecord) ++report.records_after;
  }
  return report;
}

absl::StatusOr<NamesJournalContents> DecodeNamesJournal(
    absl::string_view bytes, uint64_t store_group_tag) {
  if (absl::Status s = CheckHeader(bytes); !s.ok()) return s;
  NamesJournalContents contents;
  // Ordered by key so that the result is deterministic.
  // Ids ordered too, so that names come out in id order.
  std::map<std::string, std::map<MemberId, std::string>> state;
  std::map<std::string, Micros> expiries;
  uint64_t open_group = 0;  // the tag of the group being read, 0: none
  bool skipping = false;    // its records are not applied
  uint64_t offset = kHeaderBytes;
  while (offset < bytes.size()) {
    NamesFrame frame = ReadNamesFrame(bytes, offset);
    if (frame.kind == NamesFrame::Kind::kTorn) {
      contents.torn_tail = true;
      break;
    }
    if (frame.kind == NamesFrame::Kind::kDamaged) return frame.damage;
    NamesRecord* record = &frame.record;
    const bool begins = record->type == NamesRecordType::kGroupBegin;
    if (begins || record->type == NamesRecordType::kGroupEnd) {
      if (begins == (open_group != 0) ||
          (!begins && record->id != open_group)) {
        return absl::DataLossError(absl::StrCat(
            "names journal record at byte ", offset, " is damaged: group ",
            record->id, begins ? " begins inside group " : " ends in group ",
            open_group));
      }
      if (begins) {
        skipping = record->id > store_group_tag;
        ++(skipping ? contents.groups_skipped : contents.groups_applied);
      }
      open_group = begins ? record->id : 0;
      offset += frame.size;
      ++contents.records;
      continue;
    }
    if (open_group != 0 && skipping) {
      offset += frame.size;
      ++contents.records;
      ++contents.records_skipped;
      continue;
    }
    switch (record->type) {
      case NamesRecordType::kAssign:
        state[record->key][record->id] = std::move(record->name);
        break;
      case NamesRecordType::kFree:
        if (auto it = state.find(record->key); it != state.end()) {
          it->second.erase(record->id);
        }
        break;
      case NamesRecordType::kDrop:
        state.erase(record->key);
        expiries.erase(record->key);
        break;
      case NamesRecordType::kRename: {
        auto names = state.extract(record->key);
        auto expiry = expiries.extract(record->key);
        state.erase(record->name);
        expiries.erase(record->name);
        if (!names.empty()) {
          names.key() = record->name;
          state.insert(std::move(names));
        }
        if (!expiry.empty()) {
          expiry.key() = record->name;
          expiries.insert(std::move(expiry));
        }
        contents.last_rename = NamesRename{std::move(record->key),
                                           std::move(record->name), record->id};
        break;
      }
      case NamesRecordType::kExpire:
        if (record->id == 0) {
          expiries.erase(record->key);
        } else {
          expiries[record->key] = static_cast<Micros>(record->id);
        }
        break;
      case NamesRecordType::kGroupBegin:
      case NamesRecordType::kGroupEnd:
        break;  // handled above
    }
    offset += frame.size;
    ++contents.records;
  }
  contents.valid_bytes = offset;
  for (auto& [key, names] : state) {
    KeyMemberNames key_names;
    key_names.key = key;
    if (auto it = expiries.find(key); it != expiries.end()) {
      key_names.expires_at = it->second;
    }
    key_names.ids.reserve(names.size());
    key_names.names.reserve(names.size());
    for (auto& [id, name] : names) {
      key_names.ids.push_back(id);
      key_names.names.push_back(std::move(name));
    }
    contents.keys.push_back(std::move(key_names));
  }
  return contents;
}

absl::StatusOr<std::unique_ptr<NamesJournal>> NamesJournal::Open(
    std::string path, FsyncPolicy policy, uint64_t store_group_tag,
    NamesJournalContents* contents) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return internal::IoError("opening", path, errno);
  auto fail = [fd](absl::Status status) {
    ::close(fd);
    return status;
  };
  absl::StatusOr<std::string> bytes = internal::ReadWholeFile(path);
  if (!bytes.ok()) return fail(bytes.status());
  if (bytes->empty()) {
    // New (or created by a crash before its header was written).
    const std::string header = Header();
    if (absl::Status s = internal::WriteAll(fd, header, path); !s.ok()) {
      return fail(s);
    }
    if (::fdatasync(fd) != 0) {
      return fail(internal::IoError("flushing", path, errno));
    }
    if (absl::Status s = internal::SyncDirectoryOf(path); !s.ok()) {
      return fail(s);
    }
    *bytes = header;
  }
  absl::StatusOr<NamesJournalContents> decoded =
      DecodeNamesJournal(*bytes, store_group_tag);
  if (!decoded.ok()) return fail(Named(decoded.status(), path));
  if (decoded->torn_tail) {
    if (::ftruncate(fd, static_cast<off_t>(decoded->valid_bytes)) != 0 ||
        ::fdatasync(fd) != 0) {
      return fail(internal::IoError("cutting the torn tail of", path, errno));
    }
  }
  if (::lseek(fd, static_cast<off_t>(decoded->valid_bytes), SEEK_SET) < 0) {
    return fail(internal::IoError("seeking in", path, errno));
  }
  const uint64_t size = decoded->valid_bytes;
  *contents = *std::move(decoded);
  return std::unique_ptr<NamesJournal>(
      new NamesJournal(std::move(path), policy, fd, size));
}

NamesJournal::NamesJournal(std::string path, FsyncPolicy policy, int fd,
                           uint64_t size)
    : path_(std::move(path)), policy_(policy), fd_(fd), size_(size) {
  if (policy_ == FsyncPolicy::kEverySecond) {
    syncer_ = std::thread([this] { SyncLoop(); });
  }
}

NamesJournal::~NamesJournal() {
  {
    std::lock_guard lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (syncer_.joinable()) syncer_.join();
  {
    std::unique_lock sync_lock(sync_mu_);
    SyncLocked(sync_lock).IgnoreError();
  }
  ::close(fd_);
}

absl::StatusOr<uint64_t> NamesJournal::Append(const NamesRecord& record,
                                              IfAppendFails if_fails) {
  const std::string frame = EncodeNamesFrame(record);
  std::lock_guard lock(mu_);
  if (!error_.ok()) return error_;
  if (absl::Status s = internal::WriteAll(fd_, frame, path_); !s.ok()) {
    // What part of the frame reached the file goes again, so the next
    // record follows the last whole one.
    const bool cut_off = if_fails == IfAppendFails::kCallerChangesNothing &&
                         ::ftruncate(fd_, static_cast<off_t>(size_)) == 0 &&
                         ::lseek(fd_, static_cast<off_t>(size_), SEEK_SET) ==
                             static_cast<off_t>(size_);
    if (!cut_off) {
      error_ = s;
      failed_.store(true, std::memory_order_release);
    }
    last_append_error_ = s;
    return s;
  }
  last_append_error_ = absl::OkStatus();
  size_ += frame.size();
  ++records_;
  if (rewriting_) rewrite_tail_.append(frame);
  const uint64_t position =
      appended_.load(std::memory_order_relaxed) + frame.size();
  // Release: whoever later reads an id this record assigned (through the
  // dictionary's lock) and then loads appended_ sees this position.
  appended_.store(position, std::memory_order_release);
  return position;
}

absl::Status NamesJournal::SyncLocked(std::unique_lock<std::mutex>& sync_lock) {
  (void)sync_lock;
  int fd;
  uint64_t target;
  {
    std::lock_guard lock(mu_);
    if (!error_.ok()) return error_;
    fd = fd_;
    target = appended_.load(std::memory_order_relaxed);
  }
  if (synced_ >= target) return absl::OkStatus();
  // fd_ only changes under sync_mu_ (Rewrite), which is held: fd stays open.
  if (::fdatasync(fd) != 0) {
    const absl::Status status = internal::IoError("flushing", path_, errno);
    std::lock_guard lock(mu_);
    error_ = status;
    failed_.store(true, std::memory_order_release);
    return status;
  }
  ++fsyncs_;
  synced_ = target;
  return absl::OkStatus();
}

absl::Status NamesJournal::SyncTo(uint64_t position) {
  if (policy_ != FsyncPolicy::kAlways) {
    if (!failed_.load(std::memory_order_acquire)) return absl::OkStatus();
    std::lock_guard lock(mu_);
    return error_;
  }
  return SyncThrough(position);
}

absl::Status NamesJournal::SyncThrough(uint64_t position) {
  std::unique_lock sync_lock(sync_mu_);
  // A sync that started after this record was appended covered it: the
  // group commit of concurrent callers.
  if (synced_ >= position && !failed_.load(std::memory_order_acquire)) {
    return absl::OkStatus();
  }
  return SyncLocked(sync_lock);
}

absl::Status NamesJournal::SyncAppended() {
  return SyncTo(appended_.load(std::memory_order_acquire));
}

absl::Status NamesJournal::SyncAll() {
  return SyncThrough(appended_.load(std::memory_order_acquire));
}

void NamesJournal::SyncLoop() {
  std::unique_lock stop_lock(stop_mu_);
  while (!stop_cv_.wait_for(stop_lock, std::chrono::seconds(1),
                            [this] { return stop_; })) {
    stop_lock.unlock();
    {
      std::unique_lock sync_lock(sync_mu_);
      SyncLocked(sync_lock).IgnoreError();
    }
    stop_lock.lock();
  }
}

absl::Status NamesJournal::Rewrite(
    const std::function<absl::StatusOr<std::vector<KeyMemberNames>>()>&
        collect) {
  {
    std::lock_guard lock(mu_);
    if (!error_.ok()) return error_;
    if (rewriting_) {
      return absl::FailedPreconditionError(
          "a names journal rewrite is already running");
    }
    rewriting_ = true;
    rewrite_tail_.clear();
  }
  auto finish = [this](absl::Status status) {
    std::lock_guard lock(mu_);
    rewriting_ = false;
    rewrite_tail_.clear();
    rewrite_tail_.shrink_to_fit();
    return status;
  };
  // Every record appended from here on is also in rewrite_tail_, so the
  // names collected below, at whatever later moment, plus the tail replay
  // to the state at the swap.
  absl::StatusOr<std::vector<KeyMemberNames>> keys = collect();
  if (!keys.ok()) return finish(keys.status());
  std::string bytes = Header();
  uint64_t records = 0;
  for (const KeyMemberNames& key : *keys) {
    for (size_t i = 0; i < key.names.size(); ++i) {
      const MemberId id = key.ids.empty() ? i + 1 : key.ids[i];
      bytes.append(EncodeNamesFrame(
          {NamesRecordType::kAssign, key.key, id, key.names[i]}));
      ++records;
    }
    if (key.expires_at > 0) {
      bytes.append(
          EncodeNamesFrame({NamesRecordType::kExpire, key.key,
                            static_cast<uint64_t>(key.expires_at), ""}));
      ++records;
    }
  }
  const std::string temporary = path_ + ".tmp";
  const int fd =
      ::open(temporary.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return finish(internal::IoError("creating", temporary, errno));
  auto abandon = [&](absl::Status status) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return finish(status);
  };
  if (absl::Status s = internal::WriteAll(fd, bytes, temporary); !s.ok()) {
    return abandon(s);
  }
  // The swap: no append or sync may run until the new file is in place.
  std::unique_lock sync_lock(sync_mu_);
  std::lock_guard lock(mu_);
  if (absl::Status s = internal::WriteAll(fd, rewrite_tail_, temporary);
      !s.ok()) {
    sync_lock.unlock();
    ::close(fd);
    ::unlink(temporary.c_str());
    rewriting_ = false;
    return s;
  }
  const uint64_t size = bytes.size() + rewrite_tail_.size();
  absl::Status status;
  if (::fdatasync(fd) != 0) {
    status = internal::IoError("flushing", temporary, errno);
  } else if (::rename(temporary.c_str(), path_.c_str()) != 0) {
    status = internal::IoError("renaming the temporary file to", path_, errno);
  }
  if (!status.ok()) {
    ::close(fd);
    ::unlink(temporary.c_str());
    rewriting_ = false;
    return status;
  }
  // Renamed: from here the new file is the journal, whatever happens.
  ::close(fd_);
  fd_ = fd;
  size_ = size;
  records_ = records;
  ++rewrites_;
  rewriting_ = false;
  rewrite_tail_.clear();
  rewrite_tail_.shrink_to_fit();
  synced_ = appended_.load(std::memory_order_relaxed);
  if (absl::Status s = internal::SyncDirectoryOf(path_); !s.ok()) {
    // The rename may not survive a crash; the old file would then come
    // back, and it lacks what was appended to the new one. Refuse writes.
    error_ = s;
    failed_.store(true, std::memory_order_release);
    return s;
  }
  return absl::OkStatus();
}

NamesJournalStats NamesJournal::Stats() const {
  NamesJournalStats stats;
  {
    std::lock_guard sync_lock(sync_mu_);
    stats.fsyncs = fsyncs_;
    stats.unsynced_bytes = appended_.load(std::memory_order_relaxed) - synced_;
  }
  std::lock_guard lock(mu_);
  stats.bytes = size_;
  stats.records = records_;
  stats.rewrites = rewrites_;
  stats.write_error = !error_.ok() ? error_ : last_append_error_;
  return stats;
}

}  // namespace feedcore::server
