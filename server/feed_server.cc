#include "feed_server.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace feedcore::server {
namespace {

// After a failed accept (typically: out of file descriptors) wait a little
// before the next, instead of spinning.
constexpr std::chrono::milliseconds kAcceptRetryDelay(100);

constexpr char kTooManyClients[] = "-ERR max number of clients reached\r\n";

}  // namespace

absl::StatusOr<std::unique_ptr<FeedServer>> FeedServer::Create(
    const ServerOptions& options, const CommandDispatcher* dispatcher) {
  if (absl::Status status = ValidateServerOptions(options); !status.ok()) {
    return status;
  }
  if (dispatcher == nullptr) {
    return absl::InvalidArgumentError("FeedServer needs a dispatcher");
  }
  std::unique_ptr<FeedServer> server(new FeedServer(options, dispatcher));
  if (absl::Status status = server->Listen(); !status.ok()) return status;
  return server;
}

FeedServer::FeedServer(const ServerOptions& options,
                       const CommandDispatcher* dispatcher)
    : options_(options),
      dispatcher_(dispatcher),
      strand_(asio::make_strand(io_)),
      acceptor_(strand_),
      signals_(strand_, SIGINT, SIGTERM),
      accept_retry_(strand_),
      expiry_timer_(strand_) {}

absl::Status FeedServer::Listen() {
  asio::error_code error;
  const asio::ip::address address =
      asio::ip::make_address(options_.address, error);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("--address ", options_.address,
                     " is not an IP address: ", error.message()));
  }
  const asio::ip::tcp::endpoint endpoint(address,
                                         static_cast<uint16_t>(options_.port));
  acceptor_.open(endpoint.protocol(), error);
  if (!error)
    acceptor_.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error)
    acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options_.address, ":", options_.port,
                     ": ", error.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  dispatcher_->stats().tcp_port.store(port_, std::memory_order_relaxed);
  return absl::OkStatus();
}

void FeedServer::Run() {
  asio::post(strand_, [this] {
    if (stopping_) return;  // Stop came first: start nothing
    signals_.async_wait([this](const asio::error_code& error, int) {
      if (!error) Stop();
    });
    Accept();
    ExpireKeysLater();
  });
  size_t threads = options_.threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t i = 1; i < threads; ++i) pool.emplace_back([this] { io_.run(); });
  io_.run();
  for (std::thread& thread : pool) thread.join();
}

void FeedServer::ExpireKeysLater() {
  // A pass drops at most this many keys, so that it never holds the strand
  // long; the rest go in the next.
  constexpr size_t kExpiryBudget = 1000;
  expiry_timer_.expires_after(
      std::chrono::milliseconds(options_.active_expiry_interval_millis));
  expiry_timer_.async_wait([this](const asio::error_code& error) {
    if (error || stopping_) return;
    if (absl::Status status = dispatcher_->DeleteExpiredKeys(kExpiryBudget);
        !status.ok()) {
      std::fprintf(stderr, "feedcore-server: expiring keys: %s\n",
                   std::string(status.message()).c_str());
    }
    ExpireKeysLater();
  });
}

void FeedServer::Stop() {
  asio::post(strand_, [this] {
    stopping_ = true;
    asio::error_code ignored;
    acceptor_.close(ignored);
    signals_.cancel(ignored);
    accept_retry_.cancel();
    expiry_timer_.cancel();
    // Connections finish the command they are running, then see their
    // socket closed; Run returns when the last one is gone.
    connections_.CloseAll();
  });
}

void FeedServer::Accept() {
  acceptor_.async_accept(
      asio::make_strand(io_),
      [this](const asio::error_code& error, asio::ip::tcp::socket socket) {
        OnAccepted(error, std::move(socket));
      });
}

void FeedServer::OnAccepted(const asio::error_code& error,
                            asio::ip::tcp::socket socket) {
  if (error == asio::error::operation_aborted || !acceptor_.is_open()) return;
  if (error) {
    std::fprintf(stderr, "feedcore-server: accept failed: %s\n",
                 error.message().c_str());
    accept_retry_.expires_after(kAcceptRetryDelay);
    accept_retry_.async_wait([this](const asio::error_code& wait_error) {
      if (!wait_error && !stopping_) Accept();
    });
    return;
  }
  asio::error_code ignored;
  socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  // The limits were validated in Create, so the parser always builds.
  absl::StatusOr<RespParser> parser = RespParser::Create(options_.limits);
  auto push_sink = std::make_shared<ConnectionPushSink>(dispatcher_->config(),
                                                        dispatcher_->stats());
  auto connection = std::make_shared<ClientConnection>(
      std::move(socket), *std::move(parser), *dispatcher_,
      dispatcher_->NewSession(push_sink), connections_, push_sink);
  ServerStats& stats = dispatcher_->stats();
  stats.total_connections_received.fetch_add(1, std::memory_order_relaxed);
  if (connections_.TryAdd(connection, dispatcher_->config().max_clients())) {
    connection->Start();
  } else {
    stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
    connection->RejectAndClose(kTooManyClients);
  }
  Accept();
}

}  // namespace feedcore::server
