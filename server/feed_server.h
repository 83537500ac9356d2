// FeedServer: the TCP side of feedcore-server. Accepts connections on one
// address, serves each with a ClientConnection, and runs a pool of threads
// on one Asio io_context. SIGINT and SIGTERM stop it cleanly: it stops
// accepting, closes every connection and returns from Run once the
// in-flight commands have finished.
#ifndef FEEDCORE_SERVER_FEED_SERVER_H_
#define FEEDCORE_SERVER_FEED_SERVER_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "asio.hpp"
#include "client_connection.h"
#include "command_dispatcher.h"
#include "server_options.h"

namespace feedcore::server {

class FeedServer {
 public:
  // Binds and listens. `dispatcher` must outlive the server. Of `options`,
  // the settings CONFIG SET may change (max_clients, the timeout, the
  // client buffer limits) are only validated: the server and its
  // connections read them from dispatcher->config() as they serve.
  // InvalidArgument for bad options; Unavailable if the address cannot be
  // bound.
  static absl::StatusOr<std::unique_ptr<FeedServer>> Create(
      const ServerOptions& options, const CommandDispatcher* dispatcher);

  // The port listened on (the one the system chose when options.port was
  // 0).
  uint16_t port() const { return port_; }

  // Serves until SIGINT, SIGTERM or Stop; blocks the calling thread, which
  // is one of the serving threads.
  void Run();

  // Stops serving, from any thread.
  void Stop();

 private:
  FeedServer(const ServerOptions& options, const CommandDispatcher* dispatcher);
  absl::Status Listen();
  void Accept();
  void OnAccepted(const asio::error_code& error, asio::ip::tcp::socket socket);
  // Drops expired sorted-set keys every active_expiry_interval_millis, as
  // Redis's active expiry does, so that keys nobody reads again do not stay.
  void ExpireKeysLater();

  const ServerOptions options_;
  const CommandDispatcher* const dispatcher_;
  asio::io_context io_;
  // The acceptor, the signals and Stop run on this strand, so they never
  // race although every thread runs handlers.
  asio::strand<asio::io_context::executor_type> strand_;
  asio::ip::tcp::acceptor acceptor_;
  asio::signal_set signals_;
  asio::steady_timer accept_retry_;
  asio::steady_timer expiry_timer_;
  // Set by Stop, on the strand. A timer whose wait completed before Stop
  // cancelled it still runs its handler; this tells the handler not to
  // start another wait, which would keep Run from returning.
  bool stopping_ = false;
  ConnectionTracker connections_;
  uint16_t port_ = 0;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_SERVER_H_
