#include "resp_writer.h"

#include <algorithm>
#include <charconv>

namespace feedcore::server {
namespace {

// Room for a type byte, any 64-bit integer and CRLF.
constexpr size_t kHeaderBytes = 24;

// Writes "<type><value>\r\n" at `at` and returns the byte after it. The
// replies' framing is written into a stack buffer and appended once, since
// it is on the path of every reply element.
template <typename Int>
char* PutHeader(char type, Int value, char* at) {
  *at++ = type;
  at = std::to_chars(at, at + 21, value).ptr;
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

void AppendHeader(std::string* out, char type, int64_t value) {
  char header[kHeaderBytes];
  out->append(header, PutHeader(type, value, header) - header);
}

}  // namespace

void RespWriter::Line(char type, absl::string_view text) {
  const size_t start = out_->size();
  out_->push_back(type);
  out_->append(text.data(), text.size());
  for (size_t i = start + 1; i < out_->size(); ++i) {
    char& c = (*out_)[i];
    if (c == '\r' || c == '\n') c = ' ';
  }
  out_->append("\r\n");
}

void RespWriter::SimpleString(absl::string_view text) { Line('+', text); }

void RespWriter::Error(absl::string_view message) { Line('-', message); }

void RespWriter::Integer(int64_t value) { AppendHeader(out_, ':', value); }

void RespWriter::Bulk(absl::string_view bytes) {
  char header[kHeaderBytes];
  out_->append(header, PutHeader('$', bytes.size(), header) - header);
  out_->append(bytes.data(), bytes.size());
  out_->append("\r\n", 2);
}

void RespWriter::Null() {
  if (resp3_) {
    out_->append("_\r\n");
  } else {
    out_->append("$-1\r\n");
  }
}

void RespWriter::VerbatimText(absl::string_view text) {
  if (!resp3_) return Bulk(text);
  char header[kHeaderBytes];
  out_->append(header, PutHeader('=', text.size() + 4, header) - header);
  out_->append("txt:");
  out_->append(text.data(), text.size());
  out_->append("\r\n");
}

void RespWriter::NullArray() {
  if (resp3_) {
    out_->append("_\r\n");
  } else {
    out_->append("*-1\r\n");
  }
}

void RespWriter::Score(int64_t score) {
  if (resp3_) return AppendHeader(out_, ',', score);
  // "$<digits>\r\n<score>\r\n": the digits first, then their header.
  char digits[kHeaderBytes];
  const size_t length = std::to_chars(digits, digits + 21, score).ptr - digits;
  char reply[2 * kHeaderBytes];
  char* at = PutHeader('$', length, reply);
  at = std::copy(digits, digits + length, at);
  *at++ = '\r';
  *at++ = '\n';
  out_->append(reply, at - reply);
}

void RespWriter::ArrayHeader(size_t count) {
  char header[kHeaderBytes];
  out_->append(header, PutHeader('*', count, header) - header);
}

void RespWriter::PushHeader(size_t count) {
  char header[kHeaderBytes];
  out_->append(header, PutHeader(resp3_ ? '>' : '*', count, header) - header);
}

void RespWriter::MapHeader(size_t count) {
  if (resp3_) {
    char header[kHeaderBytes];
    out_->append(header, PutHeader('%', count, header) - header);
  } else {
    ArrayHeader(2 * count);
  }
}

}  // namespace feedcore::server
