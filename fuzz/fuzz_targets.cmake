# The fuzz targets, listed once. Whoever includes this file first defines
# feedcore_fuzz_target(NAME name SOURCES file... [INCLUDES dir...]):
# fuzz/CMakeLists.txt builds each as a libFuzzer binary (FEEDCORE_FUZZ=ON,
# clang), fuzz/replay_tests.cmake as a plain program that replays the
# target's committed corpus, fuzz/corpus/<name>, as a ctest.
#
# Every target may use the library's internals (src/), the reference models
# of the model-based tests (tests/) and the helpers in fuzz/.

feedcore_fuzz_target(NAME timeline_cursor_fuzzer
  SOURCES timeline_cursor_fuzzer.cc)
feedcore_fuzz_target(NAME follow_list_cursor_fuzzer
  SOURCES follow_list_cursor_fuzzer.cc)
feedcore_fuzz_target(NAME leaderboard_cursor_fuzzer
  SOURCES leaderboard_cursor_fuzzer.cc)
feedcore_fuzz_target(NAME snapshot_load_fuzzer
  SOURCES snapshot_load_fuzzer.cc)
feedcore_fuzz_target(NAME change_stream_position_fuzzer
  SOURCES change_stream_position_fuzzer.cc)
feedcore_fuzz_target(NAME change_file_fuzzer
  SOURCES change_file_fuzzer.cc)
feedcore_fuzz_target(NAME durable_store_open_fuzzer
  SOURCES durable_store_open_fuzzer.cc)
# The reference model is compiled into the target, so that it carries the
# same instrumentation.
feedcore_fuzz_target(NAME api_sequence_fuzzer
  SOURCES api_sequence_fuzzer.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model_edits.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model_markers.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model_relations.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model_lists.cc)
# The RESP parser of feedcore-server (server/), compiled into the target
# itself so that it carries the same instrumentation.
feedcore_fuzz_target(NAME resp_parser_fuzzer
  SOURCES resp_parser_fuzzer.cc
          ${PROJECT_SOURCE_DIR}/server/resp_parser.cc
  INCLUDES ${PROJECT_SOURCE_DIR}/server)
# The config file parser of feedcore-server, with the server's settings,
# compiled in as the RESP parser is.
feedcore_fuzz_target(NAME config_file_fuzzer
  SOURCES config_file_fuzzer.cc
          ${PROJECT_SOURCE_DIR}/server/config_file.cc
          ${PROJECT_SOURCE_DIR}/server/server_settings.cc
  INCLUDES ${PROJECT_SOURCE_DIR}/server)
# The social calls (follows, publishes, reads, markers, mute and block,
# batch follows, counters and ranked reads, reactions, edits and pins)
# against the
# same reference model.
feedcore_fuzz_target(NAME social_sequence_fuzzer
  SOURCES social_sequence_fuzzer.cc
          social_relation_ops.cc
          social_ranked_ops.cc
          social_edit_ops.cc
          social_delivery_ops.cc
          social_reaction_ops.cc
          social_list_ops.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model_edits.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model_markers.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model_relations.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model_lists.cc
          ${PROJECT_SOURCE_DIR}/tests/model/feed_model_reactions.cc)
