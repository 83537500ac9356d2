// ClientRegistry: the connected clients as CLIENT LIST, CLIENT INFO and
// CLIENT KILL see them. Each session registers when the dispatcher makes
// it (ClientRegistration, which unregisters when the session ends); the
// network side adds the addresses and a way to close the connection; the
// commands that change what LIST shows (CLIENT SETNAME, CLIENT SETINFO,
// HELLO) update the record.
//
// Nothing here runs per command: a record changes only when a client
// names itself or switches protocol, so the one mutex is no hot spot.
//
// Thread-safe.
#ifndef FEEDCORE_SERVER_CLIENT_REGISTRY_H_
#define FEEDCORE_SERVER_CLIENT_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/functional/function_ref.h"
#include "base/mutex.h"
#include "feedcore/types.h"

namespace feedcore::server {

// What a connection does, for CLIENT LIST's idle, qbuf and omem: updated
// by the connection and the dispatcher without the registry's mutex
// (relaxed atomics: each is read alone, and a listing that lags a moment
// is still a true one).
struct ClientActivity {
  std::atomic<int64_t> last_command_at{0};  // engine clock, micros
  std::atomic<uint64_t> query_bytes{0};     // unfinished command held
  std::atomic<uint64_t> output_bytes{0};    // replies not yet written
  std::atomic<uint64_t> commands{0};
};

struct ClientRecord {
  int64_t id = 0;
  std::string address;        // "ip:port" of the client; empty off-network
  std::string local_address;  // "ip:port" it connected to
  Micros connected_at = 0;    // on the engine clock
  std::string name;
  std::string library_name;     // CLIENT SETINFO LIB-NAME
  std::string library_version;  // CLIENT SETINFO LIB-VER
  int protocol = 2;
  std::shared_ptr<ClientActivity> activity;  // never null once added
  // Closes the connection from any thread; empty off-network.
  std::function<void()> close;
};

class ClientRegistry {
 public:
  // Registers a client; returns its activity figures.
  std::shared_ptr<ClientActivity> Add(int64_t id, Micros connected_at);
  void Remove(int64_t id);
  // Sets the network side of a registered client.
  void Attach(int64_t id, std::string address, std::string local_address,
              std::function<void()> close);
  // Applies `change` to the client's record, if registered.
  void Update(int64_t id, absl::FunctionRef<void(ClientRecord&)> change);
  // Every registered client, by id.
  std::vector<ClientRecord> List() const;
  // The client's record, or one with id 0 if it is not registered.
  ClientRecord Find(int64_t id) const;

 private:
  mutable internal::SharedMutex mutex_;
  absl::btree_map<int64_t, ClientRecord> clients_ ABSL_GUARDED_BY(mutex_);
};

// A session's place in the registry, removed when the session ends.
// Move-only.
class ClientRegistration {
 public:
  ClientRegistration() = default;
  ClientRegistration(ClientRegistry* registry, int64_t id)
      : registry_(registry), id_(id) {}
  ~ClientRegistration() {
    if (registry_ != nullptr) registry_->Remove(id_);
  }
  ClientRegistration(ClientRegistration&& other) noexcept {
    *this = std::move(other);
  }
  ClientRegistration& operator=(ClientRegistration&& other) noexcept {
    if (this != &other) {
      if (registry_ != nullptr) registry_->Remove(id_);
      registry_ = other.registry_;
      id_ = other.id_;
      activity_ = std::move(other.activity_);
      other.registry_ = nullptr;
    }
    return *this;
  }
  ClientRegistration(const ClientRegistration&) = delete;
  ClientRegistration& operator=(const ClientRegistration&) = delete;

  // Null for a session made outside a dispatcher.
  ClientRegistry* registry() const { return registry_; }
  // The session's activity figures; null outside a dispatcher.
  ClientActivity* activity() const { return activity_.get(); }
  void set_activity(std::shared_ptr<ClientActivity> activity) {
    activity_ = std::move(activity);
  }

 private:
  ClientRegistry* registry_ = nullptr;
  int64_t id_ = 0;
  std::shared_ptr<ClientActivity> activity_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_CLIENT_REGISTRY_H_
