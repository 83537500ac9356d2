// The member-name file of a snapshot. The library's snapshot holds the
// boards with numeric MemberIds; the names clients use for them live in
// the server (LeaderboardStore's dictionaries), so every save writes them
// to a second file, SNAPSHOT.names, after the snapshot itself.
//
// Format (little-endian):
//   magic "FCNAMES\0" | u32 format version
//   u64 snapshot file length | u64 XXH3-64 of the snapshot file
//   u64 key count, then per key:
//     u32 key length | key | u64 name count |
//     per name: u64 MemberId | u32 length | name
//   u64 XXH3-64 of every byte before it
// Format 1, still read, has no MemberId before each name: a key's names
// are in id order, the i-th with MemberId i + 1. Format 2 names each id,
// since names are freed and their ids' slots reused (member_dictionary.h).
//
// The snapshot's length and hash tie the two files together: a names file
// from another save (the process stopped between writing the two, or the
// files were copied apart) is detected when loading instead of giving
// members the wrong names.
#ifndef FEEDCORE_EXAMPLES_FEED_SERVER_MEMBER_NAMES_FILE_H_
#define FEEDCORE_EXAMPLES_FEED_SERVER_MEMBER_NAMES_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "durable_file.h"
#include "leaderboard_store.h"

namespace feedcore::server {

inline constexpr uint32_t kMemberNamesFormatVersion = 2;

struct MemberNamesFile {
  FileDigest snapshot;  // the snapshot file these names belong to
  std::vector<KeyMemberNames> keys;
};

// The path of the names file of the snapshot at `snapshot_path`.
std::string MemberNamesPath(const std::string& snapshot_path);

std::string EncodeMemberNamesFile(const MemberNamesFile& file);

// Checks everything before trusting it: InvalidArgument if `bytes` is not
// a names file or has a format version other than 1 or 2; DataLoss for a
// checksum mismatch, a truncated or overlong file, a count larger than the
// bytes left, an empty or overlong key, a member id 0, or a key, name or
// id given twice.
absl::StatusOr<MemberNamesFile> DecodeMemberNamesFile(absl::string_view bytes);

// Replaces `path` with `file` crash-safely (base/durable_file.h), so a
// crash never leaves names that do not match a whole snapshot.
absl::Status WriteMemberNamesFile(const std::string& path,
                                  const MemberNamesFile& file);

// Reads and decodes `path`; errors name the file.
absl::StatusOr<MemberNamesFile> ReadMemberNamesFile(const std::string& path);

}  // namespace feedcore::server

#endif  // FEEDCORE_EXAMPLES_FEED_SERVER_MEMBER_NAMES_FILE_H_
