// RedisClient over hiredis (built when pkg-config finds hiredis).
#include <hiredis/hiredis.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/driver/redis_client.h"

namespace feedcore::bench {

struct RedisClient::Connection {
  redisContext* context = nullptr;
  ~Connection() {
    if (context != nullptr) redisFree(context);
  }
};

namespace {

RedisReply Convert(const redisReply& reply) {
  RedisReply out;
  switch (reply.type) {
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = reply.integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.text.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.text.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.reserve(reply.elements);
      for (size_t i = 0; i < reply.elements; ++i) {
        out.elements.push_back(Convert(*reply.element[i]));
      }
      break;
    default:
      out.type = RedisReply::Type::kNil;
  }
  return out;
}

}  // namespace

bool RedisClient::Compiled() { return true; }

RedisClient::RedisClient(std::unique_ptr<Connection> connection)
    : connection_(std::move(connection)) {}

RedisClient::~RedisClient() = default;

absl::StatusOr<std::unique_ptr<RedisClient>> RedisClient::Connect(
    const std::string& host, int port) {
  auto connection = std::make_unique<Connection>();
  connection->context = redisConnect(host.c_str(), port);
  if (connection->context == nullptr) {
    return absl::UnavailableError("redisConnect: out of memory");
  }
  if (connection->context->err != 0) {
    return absl::UnavailableError(absl::StrCat("cannot connect to ", host, ":",
                                               port, ": ",
                                               connection->context->errstr));
  }
  return std::unique_ptr<RedisClient>(new RedisClient(std::move(connection)));
}

void RedisClient::Append(absl::Span<const std::string_view> args) {
  // Most commands have a few arguments; a ZMSCORE of a friends' list has
  // hundreds, and every one of them must be sent.
  constexpr size_t kInlineArgs = 16;
  const char* inline_argv[kInlineArgs];
  size_t inline_lengths[kInlineArgs];
  std::vector<const char*> heap_argv;
  std::vector<size_t> heap_lengths;
  const char** argv = inline_argv;
  size_t* lengths = inline_lengths;
  if (args.size() > kInlineArgs) {
    heap_argv.resize(args.size());
    heap_lengths.resize(args.size());
    argv = heap_argv.data();
    lengths = heap_lengths.data();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    argv[i] = args[i].data();
    lengths[i] = args[i].size();
  }
  redisAppendCommandArgv(connection_->context, static_cast<int>(args.size()),
                         argv, lengths);
  ++pending_;
}

absl::Status RedisClient::Flush(std::vector<RedisReply>* replies) {
  absl::Status first_error;
  for (; pending_ > 0; --pending_) {
    void* raw = nullptr;
    if (redisGetReply(connection_->context, &raw) != REDIS_OK ||
        raw == nullptr) {
      pending_ = 0;
      return absl::UnavailableError(
          absl::StrCat("redis: ", connection_->context->errstr));
    }
    const redisReply* reply = static_cast<const redisReply*>(raw);
    if (reply->type == REDIS_REPLY_ERROR && first_error.ok()) {
      first_error = absl::InternalError(absl::StrCat(
          "redis error reply: ", absl::string_view(reply->str, reply->len)));
    }
    if (replies != nullptr) replies->push_back(Convert(*reply));
    freeReplyObject(raw);
  }
  return first_error;
}

absl::StatusOr<RedisReply> RedisClient::Command(
    absl::Span<const std::string_view> args) {
  Append(args);
  std::vector<RedisReply> replies;
  if (absl::Status status = Flush(&replies); !status.ok()) return status;
  return std::move(replies.front());
}

}  // namespace feedcore::bench
