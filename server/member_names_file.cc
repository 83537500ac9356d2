#include "member_names_file.h"

#include <xxhash.h>

#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "base/durable_file.h"
#include "feedcore/leaderboard.h"

namespace feedcore::server {
namespace {

constexpr char kMagic[8] = {'F', 'C', 'N', 'A', 'M', 'E', 'S', '\0'};
// snapshot.h's magic: a library snapshot given where a save is expected.
constexpr char kLibrarySnapshotMagic[8] = {'F', 'E', 'E', 'D',
                                           'S', 'N', 'A', 'P'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4;
constexpr size_t kChecksumBytes = 8;
// The smallest encoding of a key (empty key, no names) and of a name
// with its id.
constexpr uint64_t kMinKeyBytes = 4 + 8;
constexpr uint64_t kMinNameBytes = 8 + 4;

void PutU32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
}

void PutU64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
}

void PutBytes(std::string& out, absl::string_view bytes) {
  PutU32(out, static_cast<uint32_t>(bytes.size()));
  out.append(bytes.data(), bytes.size());
}

// Reads the body field by field; every read checks the bytes left.
class Reader {
 public:
  explicit Reader(absl::string_view bytes) : bytes_(bytes) {}

  size_t left() const { return bytes_.size(); }

  absl::StatusOr<uint64_t> Fixed(size_t width, absl::string_view what) {
    if (bytes_.size() < width) return Truncated(what);
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) {
      value |= uint64_t{static_cast<unsigned char>(bytes_[i])} << (8 * i);
    }
    bytes_.remove_prefix(width);
    return value;
  }

  absl::StatusOr<std::string> Bytes(absl::string_view what) {
    absl::StatusOr<uint64_t> length = Fixed(4, what);
    if (!length.ok()) return length.status();
    if (bytes_.size() < *length) return Truncated(what);
    std::string value(bytes_.substr(0, *length));
    bytes_.remove_prefix(*length);
    return value;
  }

 private:
  static absl::Status Truncated(absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat("save manifest is truncated in ", what));
  }

  absl::string_view bytes_;
};

absl::Status CheckCount(uint64_t count, uint64_t min_bytes_each, size_t left,
                        absl::string_view what) {
  if (count > left / min_bytes_each) {
    return absl::DataLossError(absl::StrCat("save manifest is damaged: ", what,
                                            " count ", count,
                                            " exceeds the bytes left"));
  }
  return absl::OkStatus();
}

absl::StatusOr<KeyMemberNames> DecodeKey(Reader& reader, uint64_t index,
                                         uint64_t version) {
  const std::string where = absl::StrCat("key #", index);
  KeyMemberNames key;
  absl::StatusOr<std::string> name = reader.Bytes(where);
  if (!name.ok()) return name.status();
  if (name->empty() || name->size() > kMaxLeaderboardNameLength) {
    return absl::DataLossError(absl::StrCat(
        "save manifest is damaged: ", where, " has length ", name->size(),
        " (keys are 1 to ", kMaxLeaderboardNameLength, " bytes)"));
  }
  key.key = *std::move(name);
  if (version >= 4) {
    absl::StatusOr<uint64_t> expires_at = reader.Fixed(8, where);
    if (!expires_at.ok()) return expires_at.status();
    key.expires_at = static_cast<Micros>(*expires_at);
    if (key.expires_at < 0) {
      return absl::DataLossError(absl::StrCat("save manifest is damaged: key ",
                                              Quote(key.key),
                                              " expires at a negative time"));
    }
  }
  absl::StatusOr<uint64_t> count = reader.Fixed(8, where);
  if (!count.ok()) return count.status();
  if (absl::Status status =
          CheckCount(*count, kMinNameBytes, reader.left(), "name");
      !status.ok()) {
    return status;
  }
  key.names.reserve(*count);
  key.ids.reserve(*count);
  absl::flat_hash_set<absl::string_view> seen;
  absl::flat_hash_set<MemberId> seen_ids;
  for (uint64_t i = 0; i < *count; ++i) {
    absl::StatusOr<uint64_t> id = reader.Fixed(8, where);
    if (!id.ok()) return id.status();
    if (*id == 0 || !seen_ids.insert(*id).second) {
      return absl::DataLossError(absl::StrCat(
          "save manifest is damaged: key ", Quote(key.key),
          *id == 0 ? " gives member id 0" : " gives a member id twice"));
    }
    key.ids.push_back(*id);
    absl::StatusOr<std::string> member = reader.Bytes(where);
    if (!member.ok()) return member.status();
    key.names.push_back(*std::move(member));
  }
  // A second pass: the strings no longer move once the vector is full.
  for (const std::string& member : key.names) {
    if (!seen.insert(member).second) {
      return absl::DataLossError(absl::StrCat("save manifest is damaged: key ",
                                              Quote(key.key), " lists member ",
                                              Quote(member), " twice"));
    }
  }
  return key;
}

}  // namespace

std::string EncodeMemberNamesFile(const MemberNamesFile& file) {
  std::string out(kMagic, sizeof(kMagic));
  PutU32(out, kMemberNamesFormatVersion);
  PutU64(out, file.generation);
  PutU64(out, file.snapshot.bytes);
  PutU64(out, file.snapshot.hash);
  PutU64(out, file.keys.size());
  for (const KeyMemberNames& key : file.keys) {
    PutBytes(out, key.key);
    PutU64(out, static_cast<uint64_t>(key.expires_at));
    PutU64(out, key.names.size());
    for (size_t i = 0; i < key.names.size(); ++i) {
      PutU64(out, key.ids.empty() ? i + 1 : key.ids[i]);
      PutBytes(out, key.names[i]);
    }
  }
  PutU64(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

absl::StatusOr<MemberNamesFile> DecodeMemberNamesFile(absl::string_view bytes) {
  if (bytes.size() >= sizeof(kLibrarySnapshotMagic) &&
      std::memcmp(bytes.data(), kLibrarySnapshotMagic,
                  sizeof(kLibrarySnapshotMagic)) == 0) {
    return absl::InvalidArgumentError(
        "this is a bare library snapshot, not a feedcore-server save "
        "(a save's path holds its manifest)");
  }
  if (bytes.size() < sizeof(kMagic) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError(
        "not a feedcore-server save manifest (bad magic)");
  }
  if (bytes.size() < kHeaderBytes + kChecksumBytes) {
    return absl::DataLossError("save manifest is truncated in its header");
  }
  Reader header(bytes.substr(sizeof(kMagic), 4));
  const uint64_t version = header.Fixed(4, "header").value();
  if (version < kOldestMemberNamesFormatVersion ||
      version > kMemberNamesFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "save manifest has format version ", version,
        "; this server reads "
        "versions ",
        kOldestMemberNamesFormatVersion, " to ", kMemberNamesFormatVersion));
  }
  const absl::string_view covered =
      bytes.substr(0, bytes.size() - kChecksumBytes);
  Reader trailer(bytes.substr(covered.size()));
  if (trailer.Fixed(8, "checksum").value() !=
      XXH3_64bits(covered.data(), covered.size())) {
    return absl::DataLossError("save manifest is damaged: checksum mismatch");
  }

  Reader reader(covered.substr(kHeaderBytes));
  MemberNamesFile file;
  absl::StatusOr<uint64_t> generation = reader.Fixed(8, "snapshot generation");
  if (!generation.ok()) return generation.status();
  file.generation = *generation;
  absl::StatusOr<uint64_t> snapshot_bytes = reader.Fixed(8, "snapshot length");
  if (!snapshot_bytes.ok()) return snapshot_bytes.status();
  absl::StatusOr<uint64_t> snapshot_hash = reader.Fixed(8, "snapshot hash");
  if (!snapshot_hash.ok()) return snapshot_hash.status();
  file.snapshot = {*snapshot_bytes, *snapshot_hash};
  absl::StatusOr<uint64_t> key_count = reader.Fixed(8, "key count");
  if (!key_count.ok()) return key_count.status();
  if (absl::Status status =
          CheckCount(*key_count, kMinKeyBytes, reader.left(), "key");
      !status.ok()) {
    return status;
  }
  file.keys.reserve(*key_count);
  absl::flat_hash_set<std::string> keys;
  for (uint64_t i = 0; i < *key_count; ++i) {
    absl::StatusOr<KeyMemberNames> key = DecodeKey(reader, i, version);
    if (!key.ok()) return key.status();
    if (!keys.insert(key->key).second) {
      return absl::DataLossError(absl::StrCat("save manifest is damaged: key ",
                                              Quote(key->key),
                                              " is listed twice"));
    }
    file.keys.push_back(*std::move(key));
  }
  if (reader.left() != 0) {
    return absl::DataLossError(
        absl::StrCat("save manifest is damaged: ", reader.left(),
                     " bytes after the last key"));
  }
  return file;
}

absl::Status WriteMemberNamesFile(const std::string& path,
                                  const MemberNamesFile& file) {
  return internal::WriteFileDurably(path, EncodeMemberNamesFile(file));
}

absl::StatusOr<MemberNamesFile> ReadMemberNamesFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = internal::ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<MemberNamesFile> file = DecodeMemberNamesFile(*bytes);
  if (!file.ok()) {
    return absl::Status(file.status().code(),
                        absl::StrCat(path, ": ", file.status().message()));
  }
  return file;
}

}  // namespace feedcore::server
