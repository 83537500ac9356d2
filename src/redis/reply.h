// A Redis reply (RESP2), owned, independent of the client library that
// parsed it.
#ifndef FEEDCORE_REDIS_REPLY_H_
#define FEEDCORE_REDIS_REPLY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace feedcore::redis {

struct Reply {
  enum class Type { kNil, kInteger, kString, kStatus, kError, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string str;  // a string, a status or an error message
  std::vector<Reply> elements;

  bool is_error() const { return type == Type::kError; }
  bool is_nil() const { return type == Type::kNil; }
};

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_REPLY_H_
