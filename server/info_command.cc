#include "info_command.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "persistence_commands.h"
#include "server_stats.h"

namespace feedcore::server {
namespace {

using Lines = std::vector<std::pair<const char*, uint64_t>>;

uint64_t Load(const ServerStats::Counter& counter) {
  return counter.load(std::memory_order_relaxed);
}

void AppendLines(std::string& out, const char* title, const Lines& lines) {
  absl::StrAppend(&out, "# ", title, "\r\n");
  for (const auto& [name, value] : lines) {
    absl::StrAppend(&out, name, ":", value, "\r\n");
  }
}

struct Section {
  const char* name;  // lower case, as clients ask for it
  // Appends the "# Title" line and the section's fields.
  void (*append)(const ServerContext& server, std::string& out);
};

void Clients(const ServerContext& server, std::string& out) {
  const ServerStats& stats = *server.stats;
  AppendLines(out, "Clients",
              {{"connected_clients", Load(stats.connected_clients)},
               {"client_query_buffers_bytes", stats.query_bytes()}});
}

// Kept beside the append-only files it reports on.
void Persistence(const ServerContext& server, std::string& out) {
  out += PersistenceInfo(server);
}

void Stats(const ServerContext& server, std::string& out) {
  const ServerStats& stats = *server.stats;
  AppendLines(out, "Stats",
              {
                  {"total_connections_received",
                   Load(stats.total_connections_received)},
                  {"rejected_connections", Load(stats.rejected_connections)},
                  {"idle_timeout_disconnections",
                   Load(stats.idle_timeout_disconnections)},
                  {"client_query_buffer_limit_disconnections",
                   Load(stats.client_query_buffer_limit_disconnections)},
                  {"client_output_buffer_limit_disconnections",
                   Load(stats.client_output_buffer_limit_disconnections)},
                  {"client_query_buffer_total_limit_disconnections",
                   Load(stats.client_query_buffer_total_limit_disconnections)},
              });
}

void Keyspace(const ServerContext& server, std::string& out) {
  const MemberNameStats names = server.boards->NameStats();
  AppendLines(out, "Keyspace",
              {{"sorted_set_keys", server.boards->size()},
               {"member_names", names.names},
               {"member_name_bytes", names.bytes}});
}

// In Redis's order.
constexpr Section kSections[] = {
    {"clients", Clients},
    {"persistence", Persistence},
    {"stats", Stats},
    {"keyspace", Keyspace},
};

// INFO [section ...]; no section, "default", "all" or "everything" give
// every section. An unknown section adds nothing, as in Redis.
void Info(CommandCall& call) {
  std::string out;
  const bool all = call.args.size() == 1;
  for (const Section& section : kSections) {
    bool wanted = all;
    for (size_t i = 1; i < call.args.size() && !wanted; ++i) {
      const std::string asked = absl::AsciiStrToLower(call.args[i]);
      wanted = asked == section.name || asked == "default" || asked == "all" ||
               asked == "everything";
    }
    if (!wanted) continue;
    // Sections are separated by an empty line, as in Redis.
    if (!out.empty()) out += "\r\n";
    section.append(*call.server, out);
  }
  call.reply->Bulk(out);
}

}  // namespace

absl::Status AddInfoCommand(CommandTable& table) {
  return table.Add({"INFO", -1, {"loading", "stale"}, 0, 0, 0, Info});
}

}  // namespace feedcore::server
