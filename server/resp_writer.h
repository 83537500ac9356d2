// RespWriter: encodes replies in the protocol version a client chose.
//
// RESP2 is what every client speaks; a client that sent `HELLO 3` gets
// RESP3, which adds maps, a null type and doubles. Commands write their
// reply once through this class and it picks the encoding: a map is an
// array of alternating keys and values in RESP2, a double a bulk string, a
// null the null bulk string `$-1`.
#ifndef FEEDCORE_SERVER_RESP_WRITER_H_
#define FEEDCORE_SERVER_RESP_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace feedcore::server {

class RespWriter {
 public:
  // Appends to `out`, which must outlive the writer. `protocol` is 2 or 3;
  // anything else is treated as 2.
  RespWriter(std::string* out, int protocol)
      : out_(out), resp3_(protocol == 3) {}

  bool resp3() const { return resp3_; }
  // For HELLO, whose reply is already in the protocol it switches to.
  void set_protocol(int protocol) { resp3_ = protocol == 3; }

  // `+OK`. CR and LF in `text` are replaced by spaces: they would end the
  // line early.
  void SimpleString(absl::string_view text);
  // `-ERR ...`: `message` must start with the error code ("ERR", "NOPROTO").
  // CR and LF are replaced by spaces.
  void Error(absl::string_view message);
  void Integer(int64_t value);
  void Bulk(absl::string_view bytes);
  // Text for people (INFO, CLIENT LIST): RESP3 the verbatim string
  // `=<n>\r\ntxt:...`, RESP2 a bulk string, as Redis replies.
  void VerbatimText(absl::string_view text);
  // RESP3 `_`; RESP2 the null bulk string.
  void Null();
  // RESP3 `_`; RESP2 the null array `*-1` (EXEC aborted by WATCH).
  void NullArray();
  // An integer score: RESP3 double `,`, RESP2 bulk string, as Redis replies
  // to ZSCORE and ZINCRBY.
  void Score(int64_t score);
  void ArrayHeader(size_t count);
  // A push of `count` elements (pub/sub): RESP3 `>`, RESP2 an array.
  void PushHeader(size_t count);
  // `count` key/value pairs follow. RESP2: an array of 2 x count.
  void MapHeader(size_t count);

  // The bytes written so far (for tests).
  const std::string& output() const { return *out_; }
  // Where the replies go, for the dispatcher, which takes back the partial
  // reply of a command that failed while writing it.
  std::string& buffer() { return *out_; }

 private:
  void Line(char type, absl::string_view text);

  std::string* out_;
  bool resp3_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_RESP_WRITER_H_
