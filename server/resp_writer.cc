#include "resp_writer.h"

#include "absl/strings/str_cat.h"

namespace feedcore::server {

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

void RespWriter::Integer(int64_t value) {
  absl::StrAppend(out_, ":", value, "\r\n");
}

void RespWriter::Bulk(absl::string_view bytes) {
  absl::StrAppend(out_, "$", bytes.size(), "\r\n");
  out_->append(bytes.data(), bytes.size());
  out_->append("\r\n");
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
  absl::StrAppend(out_, "=", text.size() + 4, "\r\ntxt:");
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
  if (resp3_) {
    absl::StrAppend(out_, ",", score, "\r\n");
  } else {
    Bulk(absl::StrCat(score));
  }
}

void RespWriter::ArrayHeader(size_t count) {
  absl::StrAppend(out_, "*", count, "\r\n");
}

void RespWriter::MapHeader(size_t count) {
  if (resp3_) {
    absl::StrAppend(out_, "%", count, "\r\n");
  } else {
    ArrayHeader(2 * count);
  }
}

}  // namespace feedcore::server
