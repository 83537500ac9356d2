// GlobMatch: the patterns of KEYS, SCAN ... MATCH, ZSCAN ... MATCH and
// CONFIG GET, as Redis reads them:
//   *        any run of bytes, also none
//   ?        any one byte
//   [abc]    one of the bytes listed; [^abc] one byte not listed; [a-z] a
//            range (either way round); a backslash in brackets escapes the
//            next byte
//   \x       the byte x itself
// Everything else matches itself, byte for byte (`nocase`: ASCII letters
// without regard to case). An unclosed '[' takes the rest of the pattern
// as its list, as Redis does.
//
// Cost: O(pattern x text) in the worst case; runs of '*' count once.
// Thread-safe (no state).
#ifndef FEEDCORE_SERVER_GLOB_MATCH_H_
#define FEEDCORE_SERVER_GLOB_MATCH_H_

#include "absl/strings/string_view.h"

namespace feedcore::server {

bool GlobMatch(absl::string_view pattern, absl::string_view text,
               bool nocase = false);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_GLOB_MATCH_H_
