#include "info_command.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server_stats.h"

namespace feedcore::server {
namespace {

using Lines = std::vector<std::pair<const char*, uint64_t>>;

uint64_t Load(const ServerStats::Counter& counter) {
  return counter.load(std::memory_order_relaxed);
}

void AppendSection(std::string& out, const char* title, const Lines& lines) {
  if (!out.empty()) out += "\r\n";
  absl::StrAppend(&out, "# ", title, "\r\n");
  for (const auto& [name, value] : lines) {
    absl::StrAppend(&out, name, ":", value, "\r\n");
  }
}

struct Section {
  const char* name;   // lower case, as clients ask for it
  const char* title;  // as the reply shows it
  Lines (*lines)(const ServerContext& server);
};

Lines ClientLines(const ServerContext& server) {
  const ServerStats& stats = *server.stats;
  return {{"connected_clients", Load(stats.connected_clients)},
          {"client_query_buffers_bytes", stats.query_bytes()}};
}

Lines StatLines(const ServerContext& server) {
  const ServerStats& stats = *server.stats;
  return {
      {"total_connections_received", Load(stats.total_connections_received)},
      {"rejected_connections", Load(stats.rejected_connections)},
      {"idle_timeout_disconnections", Load(stats.idle_timeout_disconnections)},
      {"client_query_buffer_limit_disconnections",
       Load(stats.client_query_buffer_limit_disconnections)},
      {"client_output_buffer_limit_disconnections",
       Load(stats.client_output_buffer_limit_disconnections)},
      {"client_query_buffer_total_limit_disconnections",
       Load(stats.client_query_buffer_total_limit_disconnections)},
  };
}

Lines KeyspaceLines(const ServerContext& server) {
  const MemberNameStats names = server.boards->NameStats();
  return {{"sorted_set_keys", server.boards->size()},
          {"member_names", names.names},
          {"member_name_bytes", names.bytes}};
}

constexpr Section kSections[] = {
    {"clients", "Clients", ClientLines},
    {"stats", "Stats", StatLines},
    {"keyspace", "Keyspace", KeyspaceLines},
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
    if (wanted) AppendSection(out, section.title, section.lines(*call.server));
  }
  call.reply->Bulk(out);
}

}  // namespace

absl::Status AddInfoCommand(CommandTable& table) {
  return table.Add({"INFO", -1, {"loading", "stale"}, 0, 0, 0, Info});
}

}  // namespace feedcore::server
