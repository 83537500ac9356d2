#include "client_registry.h"

#include <utility>

namespace feedcore::server {

std::shared_ptr<ClientActivity> ClientRegistry::Add(int64_t id,
                                                    Micros connected_at) {
  auto activity = std::make_shared<ClientActivity>();
  activity->last_command_at.store(connected_at, std::memory_order_relaxed);
  internal::WriterLock lock(&mutex_);
  ClientRecord& record = clients_[id];
  record.id = id;
  record.connected_at = connected_at;
  record.activity = activity;
  return activity;
}

void ClientRegistry::Remove(int64_t id) {
  internal::WriterLock lock(&mutex_);
  clients_.erase(id);
}

void ClientRegistry::Attach(int64_t id, std::string address,
                            std::string local_address,
                            std::function<void()> close) {
  internal::WriterLock lock(&mutex_);
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  it->second.address = std::move(address);
  it->second.local_address = std::move(local_address);
  it->second.close = std::move(close);
}

void ClientRegistry::Update(int64_t id,
                            absl::FunctionRef<void(ClientRecord&)> change) {
  internal::WriterLock lock(&mutex_);
  if (auto it = clients_.find(id); it != clients_.end()) change(it->second);
}

std::vector<ClientRecord> ClientRegistry::List() const {
  internal::WriterLock lock(&mutex_);
  std::vector<ClientRecord> records;
  records.reserve(clients_.size());
  for (const auto& [id, record] : clients_) records.push_back(record);
  return records;
}

ClientRecord ClientRegistry::Find(int64_t id) const {
  internal::WriterLock lock(&mutex_);
  auto it = clients_.find(id);
  return it == clients_.end() ? ClientRecord{} : it->second;
}

}  // namespace feedcore::server
