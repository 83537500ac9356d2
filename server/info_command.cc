#include "info_command.h"

#include <malloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "persistence_commands.h"
#include "server_stats.h"
#include "server_version.h"

namespace feedcore::server {
namespace {

uint64_t Load(const std::atomic<uint64_t>& counter) {
  return counter.load(std::memory_order_relaxed);
}

template <typename Value>
void Field(std::string& out, absl::string_view name, const Value& value) {
  absl::StrAppend(&out, name, ":", value, "\r\n");
}

// Redis's "1.37M" form of a byte count.
std::string HumanBytes(uint64_t bytes) {
  const char* const units = "BKMGTP";
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? absl::StrCat(bytes, "B")
                   : absl::StrFormat("%.2f%c", value, units[unit]);
}

struct Section {
  const char* name;  // lower case, as clients ask for it
  bool in_default;   // part of a bare INFO, as in Redis
  // Appends the "# Title" line and the section's fields.
  void (*append)(const ServerContext& server, std::string& out);
};

void Server(const ServerContext& server, std::string& out) {
  out += "# Server\r\n";
  Field(out, "redis_version", kRedisCompatibleVersion);
  Field(out, "feedcore_version", kFeedcoreVersion);
  Field(out, "redis_git_sha1", "00000000");
  Field(out, "redis_git_dirty", 0);
  Field(out, "redis_mode", "standalone");
  utsname system{};
  if (uname(&system) == 0) {
    Field(
        out, "os",
        absl::StrCat(system.sysname, " ", system.release, " ", system.machine));
  }
  Field(out, "arch_bits", sizeof(void*) * 8);
  Field(out, "multiplexing_api", "epoll");
  Field(out, "process_id", getpid());
  Field(out, "run_id", server.run_id);
  Field(out, "tcp_port",
        server.stats->tcp_port.load(std::memory_order_relaxed));
  const Micros now = server.feeds->options().clock->Now();
  Field(out, "server_time_usec", now);
  const int64_t uptime = (now - server.started_at) / 1'000'000;
  Field(out, "uptime_in_seconds", uptime);
  Field(out, "uptime_in_days", uptime / 86400);
}

void Clients(const ServerContext& server, std::string& out) {
  const ServerStats& stats = *server.stats;
  out += "# Clients\r\n";
  Field(out, "connected_clients", Load(stats.connected_clients));
  Field(out, "client_query_buffers_bytes", stats.query_bytes());
  Field(out, "blocked_clients", 0);
}

// What the allocator has handed out (glibc's malloc, which the server
// uses) and what the process holds in memory.
void Memory(const ServerContext& server, std::string& out) {
  const struct mallinfo2 heap = mallinfo2();
  const uint64_t used = heap.uordblks + heap.hblkhd;
  uint64_t rss = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    unsigned long long size = 0, resident = 0;
    if (std::fscanf(statm, "%llu %llu", &size, &resident) == 2) {
      rss = resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    }
    std::fclose(statm);
  }
  const MemberNameStats names = server.boards->NameStats();
  out += "# Memory\r\n";
  Field(out, "used_memory", used);
  Field(out, "used_memory_human", HumanBytes(used));
  Field(out, "used_memory_rss", rss);
  Field(out, "used_memory_rss_human", HumanBytes(rss));
  Field(out, "maxmemory", 0);
  Field(out, "maxmemory_human", "0B");
  Field(out, "maxmemory_policy", "noeviction");
  Field(out, "mem_allocator", "libc");
  Field(out, "member_names", names.names);
  Field(out, "member_name_bytes", names.bytes);
}

// Kept beside the append-only files it reports on.
void Persistence(const ServerContext& server, std::string& out) {
  out += PersistenceInfo(server);
}

uint64_t TotalCalls(const ServerContext& server) {
  uint64_t total = 0;
  for (const CommandSpec& spec : server.commands->all()) {
    total += Load(spec.counters->calls);
  }
  return total;
}

void Stats(const ServerContext& server, std::string& out) {
  const ServerStats& stats = *server.stats;
  out += "# Stats\r\n";
  Field(out, "total_connections_received",
        Load(stats.total_connections_received));
  Field(out, "total_commands_processed", TotalCalls(server));
  Field(out, "rejected_connections", Load(stats.rejected_connections));
  Field(out, "pubsub_channels", server.pubsub->Channels(std::nullopt).size());
  Field(out, "pubsub_patterns", server.pubsub->Patterns());
  // Feed-channel pushes lost to a full delivery queue (pubsub_hub.h).
  Field(out, "feed_pushes_missed", server.pubsub->missed_deliveries());
  Field(out, "expired_keys", 0);
  Field(out, "evicted_keys", 0);
  Field(out, "idle_timeout_disconnections",
        Load(stats.idle_timeout_disconnections));
  Field(out, "client_query_buffer_limit_disconnections",
        Load(stats.client_query_buffer_limit_disconnections));
  Field(out, "client_output_buffer_limit_disconnections",
        Load(stats.client_output_buffer_limit_disconnections));
  Field(out, "client_query_buffer_total_limit_disconnections",
        Load(stats.client_query_buffer_total_limit_disconnections));
}

void Replication(const ServerContext&, std::string& out) {
  out += "# Replication\r\n";
  Field(out, "role", "master");
  Field(out, "connected_slaves", 0);
}

// Every command that was called, in Redis's form.
void Commandstats(const ServerContext& server, std::string& out) {
  out += "# Commandstats\r\n";
  for (const CommandSpec& spec : server.commands->all()) {
    const CommandCounters& counters = *spec.counters;
    const uint64_t calls = Load(counters.calls);
    const uint64_t rejected = Load(counters.rejected_calls);
    if (calls == 0 && rejected == 0) continue;
    const uint64_t micros = Load(counters.micros);
    absl::StrAppendFormat(
        &out,
        "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,"
        "failed_calls=%d\r\n",
        absl::AsciiStrToLower(spec.name), calls, micros,
        calls == 0 ? 0.0 : static_cast<double>(micros) / calls, rejected,
        Load(counters.failed_calls));
  }
}

void Cluster(const ServerContext&, std::string& out) {
  out += "# Cluster\r\n";
  Field(out, "cluster_enabled", 0);
}

// Redis's one line per database that has keys: db0 only.
void Keyspace(const ServerContext& server, std::string& out) {
  out += "# Keyspace\r\n";
  const size_t keys = server.boards->KeyNames().size();
  if (keys > 0) {
    const auto [expiring, average_left] = server.boards->ExpiryStats();
    absl::StrAppend(&out, "db0:keys=", keys, ",expires=", expiring,
                    ",avg_ttl=", average_left / 1000, "\r\n");
  }
}

// In Redis's order.
constexpr Section kSections[] = {
    {"server", true, Server},
    {"clients", true, Clients},
    {"memory", true, Memory},
    {"persistence", true, Persistence},
    {"stats", true, Stats},
    {"replication", true, Replication},
    {"commandstats", false, Commandstats},
    {"cluster", true, Cluster},
    {"keyspace", true, Keyspace},
};

// INFO [section ...]: no section or "default" gives the default sections,
// "all" and "everything" every one. An unknown section adds nothing, as
// in Redis.
void Info(CommandCall& call) {
  std::vector<std::string> asked;
  for (size_t i = 1; i < call.args.size(); ++i) {
    asked.push_back(absl::AsciiStrToLower(call.args[i]));
  }
  if (asked.empty()) asked.push_back("default");
  std::string out;
  for (const Section& section : kSections) {
    bool wanted = false;
    for (const std::string& name : asked) {
      wanted |= name == section.name || name == "all" || name == "everything" ||
                (name == "default" && section.in_default);
    }
    if (!wanted) continue;
    // Sections are separated by an empty line, as in Redis.
    if (!out.empty()) out += "\r\n";
    section.append(*call.server, out);
  }
  call.reply->VerbatimText(out);
}

}  // namespace

absl::Status AddInfoCommand(CommandTable& table) {
  return table.Add({"INFO", -1, {"loading", "stale"}, 0, 0, 0, Info});
}

}  // namespace feedcore::server
