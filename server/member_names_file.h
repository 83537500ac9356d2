// The manifest of a save: the file a save writes last, which names the
// library snapshot it belongs to and holds what that snapshot does not,
// the member names of every sorted-set key. The library's snapshot holds
// the boards with numeric MemberIds; the names clients use for them live
// in the server (LeaderboardStore's dictionaries).
//
// Format (little-endian):
//   magic "FCNAMES\0" | u32 format version
//   u64 snapshot generation | u64 snapshot file length
//   u64 XXH3-64 of the snapshot file
//   u64 key count, then per key:
//     u32 key length | key | i64 expiry (engine-clock micros, 0: none;
//     from version 4) | u64 name count |
//     per name: u64 MemberId | u32 length | name
//   u64 XXH3-64 of every byte before it
// Each name carries its id, since names are freed and their ids' slots
// reused with new ids (member_dictionary.h): a key's ids need not be
// dense.
//
// A save is one unit: the snapshot goes to a file of its own generation
// (save_files.h) and the manifest, replaced atomically, commits it. The
// snapshot's length and hash tie the two together, so a snapshot damaged
// or replaced after the save is detected when loading instead of giving
// members the wrong names.
#ifndef FEEDCORE_SERVER_MEMBER_NAMES_FILE_H_
#define FEEDCORE_SERVER_MEMBER_NAMES_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "file_digest.h"
#include "leaderboard_store.h"

namespace feedcore::server {

inline constexpr uint32_t kMemberNamesFormatVersion = 4;
// Version 3, the same without the keys' expiries, still loads.
inline constexpr uint32_t kOldestMemberNamesFormatVersion = 3;

struct MemberNamesFile {
  uint64_t generation = 0;  // names the snapshot file (save_files.h)
  FileDigest snapshot;      // that file's length and hash
  std::vector<KeyMemberNames> keys;
};

std::string EncodeMemberNamesFile(const MemberNamesFile& file);

// Checks everything before trusting it: InvalidArgument if `bytes` is not
// a manifest (a bare library snapshot is named as such) or has another
// format version; DataLoss for a checksum mismatch, a truncated or
// overlong file, a count larger than the bytes left, an empty or overlong
// key, a member id 0, or a key, name or id given twice.
absl::StatusOr<MemberNamesFile> DecodeMemberNamesFile(absl::string_view bytes);

// Replaces `path` with `file` crash-safely (base/durable_file.h): a crash
// leaves the previous manifest or this one, never a mix.
absl::Status WriteMemberNamesFile(const std::string& path,
                                  const MemberNamesFile& file);

// Reads and decodes `path`; errors name the file.
absl::StatusOr<MemberNamesFile> ReadMemberNamesFile(const std::string& path);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_MEMBER_NAMES_FILE_H_
