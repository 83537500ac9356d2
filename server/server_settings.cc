#include "server_settings.h"

#include <vector>

namespace feedcore::server {

absl::Span<const SettingSpec> ServerSettings() {
  using K = SettingKind;
  static const std::vector<SettingSpec>* const kSettings =
      new std::vector<SettingSpec>{
          {"address", K::kString, {"bind"}, false},
          {"port", K::kInteger, {}, false},
          {"threads", K::kInteger, {}, false},
          {"max_clients", K::kInteger, {"maxclients"}, true},
          {"timeout", K::kInteger, {}, true},
          {"requirepass", K::kString, {}, true},
          {"requirepass_file", K::kString, {}, false},
          {"protected_mode", K::kBoolean, {}, false},
          {"client_query_buffer_limit", K::kBytes, {}, true},
          {"client_output_buffer_limit", K::kBytes, {}, true},
          {"client_query_buffer_total_limit", K::kBytes, {}, true},
          {"max_bulk_bytes", K::kBytes, {}, false},
          {"max_args", K::kInteger, {}, false},
          {"max_inline_bytes", K::kBytes, {}, false},
          {"max_request_bytes", K::kBytes, {}, false},
          {"leaderboard_partitions", K::kInteger, {}, false},
          {"engine_shards", K::kInteger, {}, false},
          {"fanout_threads", K::kInteger, {}, false},
          {"hybrid_fanout_threshold", K::kInteger, {}, false},
          {"inactive_after_seconds", K::kInteger, {}, false},
          {"max_payload_bytes", K::kBytes, {}, false},
          {"repost_window", K::kInteger, {}, false},
          {"repost_kinds", K::kString, {}, false},
          {"snapshot_file", K::kString, {}, false},
          {"load", K::kBoolean, {}, false},
          {"snapshot_on_exit", K::kBoolean, {}, false},
          {"dir", K::kString, {}, false},
          {"appendonly", K::kString, {}, false},
          {"appendfsync", K::kString, {}, false},
      };
  return *kSettings;
}

}  // namespace feedcore::server
