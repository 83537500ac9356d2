// How a timeline entry is kept as a sorted-set member in Redis.
//
// A member is 40 bytes, each field big-endian: ts, activity id, actor,
// expires_at, group. The score is ts. Redis orders members of equal score
// by their bytes, and big-endian integers compare as bytes the way they
// compare as numbers, so the set's order is exactly the (ts, activity_id)
// key order, even where two timestamps beyond 2^53 share one double score.
// Lua scripts compare keys and expiries as byte strings for the same reason
// (Lua numbers are doubles): bytes 1-16 are the key, 17-24 the actor,
// 25-32 the expiry.
#ifndef FEEDCORE_REDIS_ENTRY_CODEC_H_
#define FEEDCORE_REDIS_ENTRY_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "feedcore/types.h"

namespace feedcore::redis {

inline constexpr size_t kEntryMemberSize = 40;

inline void AppendBigEndian(uint64_t value, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

inline uint64_t ReadBigEndian(absl::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

inline std::string BigEndian(uint64_t value) {
  std::string out;
  AppendBigEndian(value, &out);
  return out;
}

// The 16-byte key prefix of a member with `key`.
inline std::string EntryKeyBytes(const EntryKey& key) {
  std::string out;
  out.reserve(16);
  AppendBigEndian(static_cast<uint64_t>(key.ts), &out);
  AppendBigEndian(key.activity_id, &out);
  return out;
}

// The key of 16 key bytes (EntryKeyBytes), or of a member's first 16.
inline EntryKey EntryKeyOfBytes(absl::string_view bytes) {
  return {static_cast<Micros>(ReadBigEndian(bytes.substr(0, 8))),
          ReadBigEndian(bytes.substr(8, 8))};
}

inline std::string EncodeEntryMember(const StoredEntry& entry) {
  std::string out;
  out.reserve(kEntryMemberSize);
  AppendBigEndian(static_cast<uint64_t>(entry.ts), &out);
  AppendBigEndian(entry.activity_id, &out);
  AppendBigEndian(entry.actor, &out);
  AppendBigEndian(static_cast<uint64_t>(entry.expires_at), &out);
  AppendBigEndian(entry.group, &out);
  return out;
}

// nullopt for anything that is not a member EncodeEntryMember wrote.
inline std::optional<StoredEntry> DecodeEntryMember(absl::string_view member) {
  if (member.size() != kEntryMemberSize) return std::nullopt;
  StoredEntry entry;
  entry.ts = static_cast<Micros>(ReadBigEndian(member.substr(0, 8)));
  entry.activity_id = ReadBigEndian(member.substr(8, 8));
  entry.actor = ReadBigEndian(member.substr(16, 8));
  entry.expires_at = static_cast<Micros>(ReadBigEndian(member.substr(24, 8)));
  entry.group = ReadBigEndian(member.substr(32, 8));
  return entry;
}

// The score of an entry: its ts, in decimal (Redis parses it as a double).
inline std::string EntryScore(Micros ts) { return absl::StrCat(ts); }

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_ENTRY_CODEC_H_
