// ServerStats: counters the connections update and INFO reports, and the
// server-wide account of memory held by clients' unfinished commands.
//
// Thread-safe. Every counter is a relaxed atomic: each is read on its own
// by INFO, no other memory is published through it, and a report that
// lags a concurrent update by a moment is still a correct report.
#ifndef FEEDCORE_SERVER_SERVER_STATS_H_
#define FEEDCORE_SERVER_SERVER_STATS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace feedcore::server {

class ServerStats {
 public:
  using Counter = std::atomic<uint64_t>;

  Counter connected_clients{0};
  Counter total_connections_received{0};
  // Refused for --max_clients.
  Counter rejected_connections{0};
  // Closed for --timeout.
  Counter idle_timeout_disconnections{0};
  // Closed because their unfinished command held more than
  // --client_query_buffer_limit.
  Counter client_query_buffer_limit_disconnections{0};
  // Closed because their unwritten replies held more than
  // --client_output_buffer_limit.
  Counter client_output_buffer_limit_disconnections{0};
  // Closed because the unfinished commands of all clients together held
  // more than --client_query_buffer_total_limit.
  Counter client_query_buffer_total_limit_disconnections{0};
  // The port the server listens on, once it does (INFO's tcp_port).
  std::atomic<int> tcp_port{0};

  // CONFIG RESETSTAT: zeroes the counts of events (not connected_clients,
  // tcp_port or the bytes held, which describe the present).
  void ResetCounters() {
    for (Counter* counter : {&total_connections_received, &rejected_connections,
                             &idle_timeout_disconnections,
                             &client_query_buffer_limit_disconnections,
                             &client_output_buffer_limit_disconnections,
                             &client_query_buffer_total_limit_disconnections}) {
      counter->store(0, std::memory_order_relaxed);
    }
  }

  // Records that a connection's unfinished command now holds `now` bytes
  // instead of `before`. Returns false when the connection grew and the
  // total of all connections is over `total_limit` (0: no limit): the
  // connection is to be closed, after which it releases its bytes with
  // ChargeQueryBytes(held, 0). Only a connection that grows is refused, so
  // clients with nothing pending are never the ones closed.
  bool ChargeQueryBytes(size_t before, size_t now, size_t total_limit) {
    if (now >= before) {
      const size_t total =
          query_bytes_.fetch_add(now - before, std::memory_order_relaxed) +
          (now - before);
      return total_limit == 0 || now == before || total <= total_limit;
    }
    query_bytes_.fetch_sub(before - now, std::memory_order_relaxed);
    return true;
  }

  // The bytes all unfinished commands hold now.
  size_t query_bytes() const {
    return query_bytes_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<size_t> query_bytes_{0};
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SERVER_STATS_H_
