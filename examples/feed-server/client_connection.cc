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

ClientConnection::ClientConnection(asio::ip::tcp::socket socket,
                                   RespParser parser,
                                   const CommandDispatcher& dispatcher,
                                   SessionState session,
                                   ConnectionTracker& tracker)
    : socket_(std::move(socket)),
      parser_(std::move(parser)),
      dispatcher_(dispatcher),
      session_(std::move(session)),
      tracker_(tracker),
      drain_timer_(socket_.get_executor()) {}

ClientConnection::~ClientConnection() { tracker_.Remove(this); }

void ClientConnection::Start() {
  asio::dispatch(socket_.get_executor(),
                 [self = shared_from_this()] { self->ReadMore(); });
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
  asio::error_code ignored;
  drain_timer_.cancel();
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
  socket_.async_read_some(
      asio::buffer(read_buffer_),
      [self = shared_from_this()](const asio::error_code& error, size_t bytes) {
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
      if (session_.close_after_reply) close_after_write_ = true;
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
  if (replies_.empty()) {
    if (close_after_write_) {
      CloseAfterDrain();
    } else {
      ReadMore();
    }
    return;
  }
  asio::async_write(
      socket_, asio::buffer(replies_),
      [self = shared_from_this()](const asio::error_code& error, size_t) {
        self->replies_.clear();
        if (error) {
          self->CloseNow();
        } else if (self->close_after_write_) {
          self->CloseAfterDrain();
        } else if (self->more_buffered_) {
          self->ProcessAndRespond();
        } else {
          self->ReadMore();
        }
      });
}

}  // namespace feedcore::server
