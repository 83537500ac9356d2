#include "glob_match.h"

#include <cstddef>

#include "absl/strings/ascii.h"

namespace feedcore::server {
namespace {

bool SameByte(char a, char b, bool nocase) {
  return nocase ? absl::ascii_tolower(static_cast<unsigned char>(a)) ==
                      absl::ascii_tolower(static_cast<unsigned char>(b))
                : a == b;
}

// Matches the bracket expression starting after the '[' at p, against
// `byte`. Sets `end` to the position after its ']' (or the pattern's end).
bool BracketMatches(absl::string_view pattern, size_t p, char byte, bool nocase,
                    size_t& end) {
  bool negate = false;
  if (p < pattern.size() && pattern[p] == '^') {
    negate = true;
    ++p;
  }
  bool matched = false;
  while (p < pattern.size() && pattern[p] != ']') {
    if (pattern[p] == '\\' && p + 1 < pattern.size()) {
      matched |= SameByte(pattern[p + 1], byte, nocase);
      p += 2;
    } else if (p + 2 < pattern.size() && pattern[p + 1] == '-' &&
               pattern[p + 2] != ']') {
      unsigned char low = static_cast<unsigned char>(pattern[p]);
      unsigned char high = static_cast<unsigned char>(pattern[p + 2]);
      if (low > high) std::swap(low, high);
      unsigned char c = static_cast<unsigned char>(byte);
      if (nocase) {
        low = absl::ascii_tolower(low);
        high = absl::ascii_tolower(high);
        c = absl::ascii_tolower(c);
      }
      matched |= c >= low && c <= high;
      p += 3;
    } else {
      matched |= SameByte(pattern[p], byte, nocase);
      ++p;
    }
  }
  end = p < pattern.size() ? p + 1 : p;
  return matched != negate;
}

}  // namespace

bool GlobMatch(absl::string_view pattern, absl::string_view text, bool nocase) {
  // Iterative matching with one backtrack point: the last '*' seen and the
  // text position it has consumed up to. A later '*' supersedes an earlier
  // one, which is what keeps the cost at O(pattern x text).
  size_t p = 0, t = 0;
  size_t star = absl::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char c = pattern[p];
      if (c == '*') {
        while (p < pattern.size() && pattern[p] == '*') ++p;
        if (p == pattern.size()) return true;
        star = p;
        star_text = t;
        continue;
      }
      if (c == '?') {
        ++p;
        ++t;
        continue;
      }
      if (c == '[') {
        size_t end = 0;
        if (BracketMatches(pattern, p + 1, text[t], nocase, end)) {
          p = end;
          ++t;
          continue;
        }
      } else if (c == '\\' && p + 1 < pattern.size()) {
        if (SameByte(pattern[p + 1], text[t], nocase)) {
          p += 2;
          ++t;
          continue;
        }
      } else if (SameByte(c, text[t], nocase)) {
        ++p;
        ++t;
        continue;
      }
    }
    if (star == absl::string_view::npos) return false;
    p = star;
    t = ++star_text;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace feedcore::server
