#include "client_connection.h"

#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "resp_writer.h"

namespace feedcore::server {
namespace {

// Replies to pipelined commands are batched into one write until they
// reach this size; then they are sent before more commands run, so a long
// pipeline of large replies does not pile up in memory.
constexpr size_t kFlushBytes = 256 * 1024;

// How long a connection closed by the server waits for the client to close
// its side (see CloseAfterDrain).
constexpr std::chrono::seconds kDrainGracePeriod(2);

}  // namespace

bool ConnectionTracker::TryAdd(
    const std::shared_ptr<ClientConnection>& connection, size_t limit) {
  std::lock_guard lock(mutex_);
  if (open_.size() >= limit) return false;
  open_.emplace(connection.get(), connection);
  return true;
}

void ConnectionTracker::Remove(const ClientConnection* connection) {
  std::lock_guard lock(mutex_);
  open_.erase(connection);
}

void ConnectionTracker::CloseAll() {
  // Close outside the lock: a connection released here may be destroyed,
  // and its destructor takes the lock to remove itself.
  std::vector<std::shared_ptr<ClientConnection>> open;
  {
    std::lock_guard lock(mutex_);
    open.reserve(open_.size());
    for (auto& [key, weak] : open_) {
      if (std::shared_ptr<ClientConnection> connection = weak.lock()) {
        open.push_back(std::move(connection));
      }
    }
  }
  for (const std::shared_ptr<ClientConnection>& connection : open) {
    connection->Close();
  }
}

size_t ConnectionTracker::size() const {
  std::lock_guard lock(mutex_);
  return open_.size();
}

bool ConnectionPushSink::Push(size_t elements, absl::string_view body) {
  std::lock_guard lock(mutex_);
  if (closed_) return false;
  RespWriter writer(&pending_, resp3_.load(std::memory_order_relaxed) ? 3 : 2);
  writer.PushHeader(elements);
  pending_.append(body.data(), body.size());
  const size_t limit = config_.client_output_buffer_limit();
  if (limit != 0 && pending_.size() > limit) {
    closed_ = true;
    std::string().swap(pending_);
    stats_.client_output_buffer_limit_disconnections.fetch_add(
        1, std::memory_order_relaxed);
    asio::post(strand_, [weak = connection_] {
      if (std::shared_ptr<ClientConnection> connection = weak.lock()) {
        connection->Close();
      }
    });
    return false;
  }
  if (!flush_posted_) {
    flush_posted_ = true;
    asio::post(strand_, [weak = connection_] {
      if (std::shared_ptr<ClientConnection> connection = weak.lock()) {
        connection->FlushPushes();
      }
    });
  }
  return true;
}

void ConnectionPushSink::Bind(std::weak_ptr<ClientConnection> connection,
                              asio::any_io_executor strand) {
  std::lock_guard lock(mutex_);
  connection_ = std::move(connection);
  strand_ = std::move(strand);
}

std::string ConnectionPushSink::Take() {
  std::lock_guard lock(mutex_);
  flush_posted_ = false;
  return std::exchange(pending_, {});
}

void ConnectionPushSink::Close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  std::string().swap(pending_);
}

ClientConnection::ClientConnection(
    asio::ip::tcp::socket socket, RespParser parser,
    const CommandDispatcher& dispatcher, SessionState session,
    ConnectionTracker& tracker, std::shared_ptr<ConnectionPushSink> push_sink)
    : socket_(std::move(socket)),
      parser_(std::move(parser)),
      dispatcher_(dispatcher),
      session_(std::move(session)),
      tracker_(tracker),
      stats_(dispatcher.stats()),
      config_(dispatcher.config()),
      drain_timer_(socket_.get_executor()),
      idle_timer_(socket_.get_executor()),
      push_sink_(std::move(push_sink)) {
  parser_.set_unauthenticated(!session_.authenticated);
}

ClientConnection::~ClientConnection() {
  stats_.ChargeQueryBytes(charged_query_bytes_, 0, 0);
  if (started_)
    stats_.connected_clients.fetch_sub(1, std::memory_order_relaxed);
  tracker_.Remove(this);
}

void ClientConnection::Start() {
  started_ = true;
  stats_.connected_clients.fetch_add(1, std::memory_order_relaxed);
  // For CLIENT LIST and CLIENT KILL.
  asio::error_code remote_error, local_error;
  const asio::ip::tcp::endpoint remote = socket_.remote_endpoint(remote_error);
  const asio::ip::tcp::endpoint local = socket_.local_endpoint(local_error);
  auto address = [](const asio::ip::tcp::endpoint& endpoint) {
    return absl::StrCat(endpoint.address().to_string(), ":", endpoint.port());
  };
  if (push_sink_ != nullptr) {
    push_sink_->Bind(shared_from_this(), socket_.get_executor());
  }
  dispatcher_.clients().Attach(
      session_.client_id, remote_error ? "" : address(remote),
      local_error ? "" : address(local),
      [weak = std::weak_ptr<ClientConnection>(shared_from_this())] {
        if (std::shared_ptr<ClientConnection> connection = weak.lock()) {
          connection->Close();
        }
      });
  asio::dispatch(socket_.get_executor(),
                 [self = shared_from_this()] { self->ReadMore(); });
}

void ClientConnection::ArmIdleTimer() {
  const int64_t timeout = config_.idle_timeout_seconds();
  if (timeout == 0 || session_.pubsub.count() > 0) {
    // A wait armed before CONFIG SET timeout 0 must not fire.
    idle_timer_.cancel();
    return;
  }
  // Re-arming cancels the previous wait, whose handler then sees
  // operation_aborted.
  idle_timer_.expires_after(std::chrono::seconds(timeout));
  idle_timer_.async_wait(
      [self = shared_from_this()](const asio::error_code& error) {
        // A wait that completed just as the timer was re-armed finds the
        // new expiry still ahead.
        if (error ||
            self->idle_timer_.expiry() > std::chrono::steady_clock::now()) {
          return;
        }
        self->stats_.idle_timeout_disconnections.fetch_add(
            1, std::memory_order_relaxed);
        self->CloseNow();
      });
}

bool ClientConnection::AccountQueryBytes() {
  const size_t held = parser_.held_bytes();
  const size_t query_limit = config_.client_query_buffer_limit();
  if (query_limit != 0 && held > query_limit) {
    stats_.client_query_buffer_limit_disconnections.fetch_add(
        1, std::memory_order_relaxed);
    CloseNow();  // gives back what was charged so far
    return false;
  }
  const bool within_total = stats_.ChargeQueryBytes(
      charged_query_bytes_, held, config_.client_query_buffer_total_limit());
  charged_query_bytes_ = held;  // charged either way; CloseNow gives it back
  if (!within_total) {
    stats_.client_query_buffer_total_limit_disconnections.fetch_add(
        1, std::memory_order_relaxed);
    CloseNow();
    return false;
  }
  return true;
}

void ClientConnection::RejectAndClose(std::string reply) {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this(),
                                          reply = std::move(reply)]() mutable {
    self->replies_ = std::move(reply);
    self->close_after_write_ = true;
    asio::async_write(self->socket_, asio::buffer(self->replies_),
                      [self](const asio::error_code& error, size_t) {
                        if (error) {
                          self->CloseNow();
                        } else {
                          self->CloseAfterDrain();
                        }
                      });
  });
}

void ClientConnection::Close() {
  asio::post(socket_.get_executor(),
             [self = shared_from_this()] { self->CloseNow(); });
}

void ClientConnection::CloseNow() {
  closed_ = true;
  if (push_sink_ != nullptr) push_sink_->Close();
  asio::error_code ignored;
  drain_timer_.cancel();
  idle_timer_.cancel();
  // The unfinished command is dropped with the connection.
  stats_.ChargeQueryBytes(charged_query_bytes_, 0, 0);
  charged_query_bytes_ = 0;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

void ClientConnection::CloseAfterDrain() {
  // Closing a socket with unread input makes the kernel send a reset, which
  // can destroy the last reply before the client reads it. So: end our
  // side, discard what the client still sends until it closes too, and
  // give up after a short grace period.
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  drain_timer_.expires_after(kDrainGracePeriod);
  drain_timer_.async_wait(
      [self = shared_from_this()](const asio::error_code& error) {
        if (!error) self->CloseNow();
      });
  DrainInput();
}

void ClientConnection::DrainInput() {
  socket_.async_read_some(
      asio::buffer(read_buffer_),
      [self = shared_from_this()](const asio::error_code& error, size_t) {
        if (error) {
          self->drain_timer_.cancel();
          self->CloseNow();
        } else {
          self->DrainInput();
        }
      });
}

void ClientConnection::ReadMore() {
  ArmIdleTimer();
  socket_.async_read_some(
      asio::buffer(read_buffer_),
      [self = shared_from_this()](const asio::error_code& error, size_t bytes) {
        self->idle_timer_.cancel();
        if (error) {
          self->CloseNow();  // the client left, or the server is stopping
          return;
        }
        self->parser_.Append(
            absl::string_view(self->read_buffer_.data(), bytes));
        self->ProcessAndRespond();
      });
}

void ClientConnection::ProcessAndRespond() {
  more_buffered_ = false;
  while (!close_after_write_) {
    if (replies_.size() >= kFlushBytes) {
      more_buffered_ = true;
      break;
    }
    const ParseStatus status = parser_.Next(command_);
    if (status == ParseStatus::kNeedMore) break;
    if (status == ParseStatus::kCommand) {
      dispatcher_.Execute(command_.args, session_, replies_);
      if (push_sink_ != nullptr) push_sink_->set_protocol(session_.protocol);
      if (session_.close_after_reply) close_after_write_ = true;
      parser_.set_unauthenticated(!session_.authenticated);
      const size_t output_limit = config_.client_output_buffer_limit();
      if (output_limit != 0 && replies_.size() > output_limit) {
        stats_.client_output_buffer_limit_disconnections.fetch_add(
            1, std::memory_order_relaxed);
        CloseNow();
        return;
      }
    } else {
      RespWriter reply(&replies_, session_.protocol);
      if (status == ParseStatus::kRejected) {
        reply.Error(command_.error);
      } else {
        reply.Error(absl::StrCat("ERR ", command_.error));
        close_after_write_ = true;
      }
    }
  }
  if (!close_after_write_ && !AccountQueryBytes()) return;
  if (ClientActivity* activity = session_.registration.activity()) {
    activity->query_bytes.store(parser_.held_bytes(),
                                std::memory_order_relaxed);
    activity->output_bytes.store(replies_.size(), std::memory_order_relaxed);
  }
  if (replies_.empty()) {
    if (close_after_write_) {
      CloseAfterDrain();
    } else {
      ReadMore();
    }
    return;
  }
  WriteReplies();
}

void ClientConnection::WriteReplies() {
  if (writing_) {
    replies_waiting_ = true;
    return;
  }
  writing_ = true;
  ArmIdleTimer();  // a client that stops reading its replies is idle too
  asio::async_write(
      socket_, asio::buffer(replies_),
      [self = shared_from_this()](const asio::error_code& error, size_t) {
        self->writing_ = false;
        self->idle_timer_.cancel();
        self->replies_.clear();
        if (ClientActivity* activity = self->session_.registration.activity()) {
          activity->output_bytes.store(0, std::memory_order_relaxed);
        }
        // One large reply does not stay allocated for the connection's life.
        if (self->replies_.capacity() > 2 * kFlushBytes) {
          std::string().swap(self->replies_);
        }
        if (error) {
          self->CloseNow();
          return;
        }
        if (self->pushes_waiting_) {
          self->pushes_waiting_ = false;
          self->FlushPushes();
        }
        if (self->close_after_write_) {
          self->CloseAfterDrain();
        } else if (self->more_buffered_) {
          self->ProcessAndRespond();
        } else {
          self->ReadMore();
        }
      });
}

void ClientConnection::FlushPushes() {
  if (closed_ || close_after_write_) return;
  if (writing_) {
    pushes_waiting_ = true;
    return;
  }
  pushes_ = push_sink_->Take();
  if (pushes_.empty()) return;
  writing_ = true;
  asio::async_write(
      socket_, asio::buffer(pushes_),
      [self = shared_from_this()](const asio::error_code& error, size_t) {
        self->writing_ = false;
        std::string().swap(self->pushes_);
        if (error) {
          self->CloseNow();
        } else if (self->replies_waiting_) {
          self->replies_waiting_ = false;
          self->WriteReplies();
        } else if (self->pushes_waiting_) {
          self->pushes_waiting_ = false;
          self->FlushPushes();
        }
      });
}

}  // namespace feedcore::server
