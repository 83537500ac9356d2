// ServerConfig: the server's settings as CONFIG GET reports them and
// CONFIG SET changes them, and the changeable ones as the connections read
// them while serving.
//
// Built once at start-up from the validated ServerOptions and every
// setting's text (the flags' values after the config file and the command
// line). CONFIG SET changes only the settings server_settings.h marks as
// changeable while serving; it validates every pair first (the setting
// exists, is changeable, is named once, its value parses and passes
// ValidateServerOptions together with the others) and changes nothing if
// one fails. A change applies to every connection from its next check:
// the idle timer's next arming, the next read or reply for the buffer
// limits, the next accepted connection for max_clients and requirepass
// (connections already authenticated stay so, as in Redis).
//
// Thread-safe. `mutex_` guards the options and the texts, and serializes
// CONFIG SET; the values connections read on every command or read are
// relaxed atomics beside them (each stands alone: no other memory is
// published through it), so the serving path takes no lock. The password
// is read under the mutex, only by AUTH, HELLO and new sessions.
#ifndef FEEDCORE_SERVER_SERVER_CONFIG_H_
#define FEEDCORE_SERVER_SERVER_CONFIG_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/mutex.h"
#include "server_options.h"

namespace feedcore::server {

class ServerConfig {
 public:
  // `options` must pass ValidateServerOptions. `texts`: each setting's
  // value by its name in server_settings.h, as the flag prints it; a
  // setting missing there is reported as empty, but the changeable ones
  // always come from `options`.
  explicit ServerConfig(
      const ServerOptions& options,
      absl::flat_hash_map<std::string, std::string> texts = {});

  int64_t idle_timeout_seconds() const {
    return idle_timeout_seconds_.load(std::memory_order_relaxed);
  }
  size_t max_clients() const {
    return max_clients_.load(std::memory_order_relaxed);
  }
  size_t client_query_buffer_limit() const {
    return query_buffer_limit_.load(std::memory_order_relaxed);
  }
  size_t client_output_buffer_limit() const {
    return output_buffer_limit_.load(std::memory_order_relaxed);
  }
  size_t client_query_buffer_total_limit() const {
    return query_buffer_total_limit_.load(std::memory_order_relaxed);
  }
  std::string requirepass() const;
  bool password_required() const;

  // CONFIG GET: (name, value) for every setting whose Redis name (dashes)
  // or alias matches one of the glob `patterns` (any case; underscores in
  // a pattern stand for dashes), each once, in server_settings.h's order.
  // Booleans read yes/no. Also Redis's `save`, always "" (no RDB saving).
  std::vector<std::pair<std::string, std::string>> Get(
      absl::Span<const std::string> patterns) const;

  // CONFIG SET name value [name value ...]. On failure the status message
  // is the whole error reply in Redis's words ("ERR CONFIG SET failed
  // (possibly related to argument 'x') - ..."), and nothing changed.
  absl::Status Set(absl::Span<const std::string> names_and_values);

 private:
  // The settings' texts, rendered for GET: `texts_` with the changeable
  // ones from `options_`.
  std::string TextOf(const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  mutable internal::SharedMutex mutex_;
  ServerOptions options_ ABSL_GUARDED_BY(mutex_);
  const absl::flat_hash_map<std::string, std::string> texts_;
  std::atomic<int64_t> idle_timeout_seconds_;
  std::atomic<size_t> max_clients_;
  std::atomic<size_t> query_buffer_limit_;
  std::atomic<size_t> output_buffer_limit_;
  std::atomic<size_t> query_buffer_total_limit_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SERVER_CONFIG_H_
