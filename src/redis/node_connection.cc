#include "redis/node_connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace feedcore::redis {
namespace {

timeval ToTimeval(Micros micros) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(micros / kMicrosPerSecond);
  tv.tv_usec = static_cast<suseconds_t>(micros % kMicrosPerSecond);
  return tv;
}

Reply Convert(const redisReply& raw) {
  Reply reply;
  switch (raw.type) {
    case REDIS_REPLY_INTEGER:
      reply.type = Reply::Type::kInteger;
      reply.integer = raw.integer;
      break;
    case REDIS_REPLY_STRING:
      reply.type = Reply::Type::kString;
      reply.str.assign(raw.str, raw.len);
      break;
    case REDIS_REPLY_STATUS:
      reply.type = Reply::Type::kStatus;
      reply.str.assign(raw.str, raw.len);
      break;
    case REDIS_REPLY_ERROR:
      reply.type = Reply::Type::kError;
      reply.str.assign(raw.str, raw.len);
      break;
    case REDIS_REPLY_ARRAY:
      reply.type = Reply::Type::kArray;
      reply.elements.reserve(raw.elements);
      for (size_t i = 0; i < raw.elements; ++i) {
        reply.elements.push_back(Convert(*raw.element[i]));
      }
      break;
    default:
      reply.type = Reply::Type::kNil;
      break;
  }
  return reply;
}

template <typename Arg>
void AppendArgv(redisContext* context, absl::Span<const Arg> args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  argv.reserve(args.size());
  lengths.reserve(args.size());
  for (const Arg& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  redisAppendCommandArgv(context, static_cast<int>(argv.size()), argv.data(),
                         lengths.data());
}

}  // namespace

absl::StatusOr<std::unique_ptr<NodeConnection>> NodeConnection::Open(
    const std::string& host, int port, Micros connect_timeout,
    Micros command_timeout) {
  std::string address = absl::StrCat(host, ":", port);
  redisContext* context =
      redisConnectWithTimeout(host.c_str(), port, ToTimeval(connect_timeout));
  if (context == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("redis node ", address, ": cannot allocate a connection"));
  }
  if (context->err != 0) {
    std::string reason = context->errstr;
    redisFree(context);
    return absl::UnavailableError(
        absl::StrCat("redis node ", address, " unreachable: ", reason));
  }
  if (redisSetTimeout(context, ToTimeval(command_timeout)) != REDIS_OK) {
    redisFree(context);
    return absl::UnavailableError(
        absl::StrCat("redis node ", address, ": cannot set the timeout"));
  }
  return std::unique_ptr<NodeConnection>(
      new NodeConnection(context, std::move(address)));
}

NodeConnection::~NodeConnection() { redisFree(context_); }

void NodeConnection::Append(absl::Span<const std::string> args) {
  AppendArgv(context_, args);
}

void NodeConnection::Append(absl::Span<const absl::string_view> args) {
  AppendArgv(context_, args);
}

absl::Status NodeConnection::Broken(absl::string_view during) {
  healthy_ = false;
  std::string reason = context_->errstr[0] != '\0'
                           ? std::string(context_->errstr)
                           : std::string("connection lost");
  if (context_->err == REDIS_ERR_IO &&
      reason.find("temporarily") != std::string::npos) {
    reason = "timed out";
  }
  return absl::UnavailableError(
      absl::StrCat("redis node ", address_, ": ", during, ": ", reason));
}

absl::Status NodeConnection::Send() {
  if (!healthy_) return Broken("sending");
  int done = 0;
  while (done == 0) {
    if (redisBufferWrite(context_, &done) != REDIS_OK) {
      return Broken("sending");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Reply> NodeConnection::Read() {
  if (!healthy_) return Broken("reading");
  void* raw = nullptr;
  if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
    return Broken("reading");
  }
  Reply reply = Convert(*static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return reply;
}

}  // namespace feedcore::redis
