// ClientConnection: one client's TCP connection. Reads what the client
// sends, runs every complete command through the dispatcher (pipelined
// commands in one read are answered with one write), and writes the
// replies back.
//
// All of a connection's work runs on its own strand, and it has at most one
// read and one write in flight, so its state needs no lock even though the
// server runs many threads. A protocol error or QUIT closes the connection
// after its reply is written; every other error is a reply and the
// connection goes on.
//
// Limits, read from the dispatcher's ServerConfig each time they are
// checked (so CONFIG SET reaches open connections), each closing the
// connection at once and counted in ServerStats: no progress for the idle
// timeout (waiting for a command or for the client to read a reply; an
// asio timer, re-armed by every read and write with the timeout of that
// moment); an unfinished command holding more than the query buffer limit;
// replies not yet written holding more than the output buffer limit; or a
// read that takes the unfinished commands of all clients past the total
// query buffer limit.
//
// Pushes (SUBSCRIBE's messages, pubsub_hub.h) are queued by any thread in
// the connection's ConnectionPushSink and written on the strand between
// the replies: one write is in flight at a time, replies or pushes, while
// a read may be pending beside it. A subscriber's connection has no idle
// timeout, as in Redis; its queued pushes count against the output
// buffer limit.
#ifndef FEEDCORE_SERVER_CLIENT_CONNECTION_H_
#define FEEDCORE_SERVER_CLIENT_CONNECTION_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "asio.hpp"
#include "command_dispatcher.h"
#include "pubsub_hub.h"
#include "resp_parser.h"
#include "server_stats.h"

namespace feedcore::server {

class ClientConnection;

// One connection's queued pushes. Push may be called from any thread; the
// rest from the connection's strand.
class ConnectionPushSink final : public PushSink {
 public:
  ConnectionPushSink(const ServerConfig& config, ServerStats& stats)
      : config_(config), stats_(stats) {}

  // Queues the push in the client's protocol and asks the connection to
  // write it. Past the output buffer limit, closes the connection.
  bool Push(size_t elements, absl::string_view body) override;

  // The connection the pushes go to, and its strand.
  void Bind(std::weak_ptr<ClientConnection> connection,
            asio::any_io_executor strand);
  // The protocol later pushes are written in (HELLO changes it).
  void set_protocol(int protocol) {
    resp3_.store(protocol == 3, std::memory_order_relaxed);
  }
  // Everything queued, taken.
  std::string Take();
  // From now on Push queues nothing.
  void Close();

 private:
  const ServerConfig& config_;
  ServerStats& stats_;
  std::atomic<bool> resp3_{false};
  std::mutex mutex_;
  std::string pending_;                         // guarded by mutex_
  bool flush_posted_ = false;                   // guarded by mutex_
  bool closed_ = false;                         // guarded by mutex_
  std::weak_ptr<ClientConnection> connection_;  // set before any Push
  asio::any_io_executor strand_;
};

// The open connections, for the connection limit and for closing them all
// at shutdown. Thread-safe.
class ConnectionTracker {
 public:
  // Registers `connection` unless `limit` connections are open already.
  bool TryAdd(const std::shared_ptr<ClientConnection>& connection,
              size_t limit);
  void Remove(const ClientConnection* connection);
  // Asks every open connection to close.
  void CloseAll();
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<const ClientConnection*, std::weak_ptr<ClientConnection>>
      open_;
};

class ClientConnection : public std::enable_shared_from_this<ClientConnection> {
 public:
  // `push_sink` is the one `session` was made with (null: none).
  ClientConnection(asio::ip::tcp::socket socket, RespParser parser,
                   const CommandDispatcher& dispatcher, SessionState session,
                   ConnectionTracker& tracker,
                   std::shared_ptr<ConnectionPushSink> push_sink = nullptr);
  ~ClientConnection();

  // Starts reading. The connection keeps itself alive until it closes.
  void Start();

  // Closes the connection from any thread.
  void Close();

  // Instead of Start, for a connection over the limit: sends `reply` (a
  // complete RESP message) and closes.
  void RejectAndClose(std::string reply);

  // Writes the pushes its sink queued, or has them wait for the write in
  // flight. On the connection's strand (the sink posts it there).
  void FlushPushes();

 private:
  void ReadMore();
  // Runs buffered commands until the parser needs more bytes, then writes
  // the replies (or reads more if there are none).
  void ProcessAndRespond();
  // Writes replies_, or has them wait for the push being written.
  void WriteReplies();
  void CloseNow();
  // Ends the connection after its last reply (QUIT, protocol error).
  void CloseAfterDrain();
  void DrainInput();
  // Starts (or restarts) the idle timeout while waiting on the client.
  void ArmIdleTimer();
  // Checks the query limits after the parser took a read; closes the
  // connection and returns false if one is broken.
  bool AccountQueryBytes();

  asio::ip::tcp::socket socket_;
  RespParser parser_;
  const CommandDispatcher& dispatcher_;
  SessionState session_;
  ConnectionTracker& tracker_;
  ServerStats& stats_;
  const ServerConfig& config_;  // the dispatcher's
  asio::steady_timer drain_timer_;
  asio::steady_timer idle_timer_;
  // What this connection's unfinished command counts for in
  // stats_.query_bytes(); given back when it closes.
  size_t charged_query_bytes_ = 0;
  bool started_ = false;

  std::array<char, 16 * 1024> read_buffer_;
  ParsedCommand command_;
  std::string replies_;  // being built, then being written
  bool close_after_write_ = false;
  bool closed_ = false;
  std::shared_ptr<ConnectionPushSink> push_sink_;  // may be null
  std::string pushes_;                             // being written
  bool writing_ = false;          // a write of replies_ or pushes_
  bool replies_waiting_ = false;  // for the push write to end
  bool pushes_waiting_ = false;   // for the write in flight to end
  // True when processing stopped early with complete commands possibly
  // still buffered (the reply batch grew large).
  bool more_buffered_ = false;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_CLIENT_CONNECTION_H_
