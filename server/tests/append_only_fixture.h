// AppendOnlyServer: a command dispatcher over the append-only files of a
// directory (--appendonly yes) without a network, reopened by making a new
// one; for the tests of what a restart recovers.
#ifndef FEEDCORE_SERVER_TESTS_APPEND_ONLY_FIXTURE_H_
#define FEEDCORE_SERVER_TESTS_APPEND_ONLY_FIXTURE_H_

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "append_only.h"
#include "command_dispatcher.h"
#include "feedcore/feedcore.h"

namespace feedcore::server::testing {

struct AppendOnlyServer {
  AppendOnlyServer(const std::string& directory, FsyncPolicy fsync) {
    AppendOnlyOptions options;
    options.directory = directory;
    options.fsync = fsync;
    EngineOptions engine;
    engine.sweep_interval = 0;
    absl::StatusOr<AppendOnlyFiles::Opened> opened =
        AppendOnlyFiles::Open(options, engine, LeaderboardOptions{});
    REQUIRE_MESSAGE(opened.ok(), opened.status());
    files = std::move(opened->files);
    boards = std::move(opened->boards);
    dispatcher = CommandDispatcher::Create(&files->store().engine(),
                                           boards.get(), nullptr, files.get())
                     .value();
    session = dispatcher->NewSession();
  }

  std::string Run(const std::vector<std::string>& args) {
    std::string out;
    dispatcher->Execute(args, session, out);
    return out;
  }

  // Declared in this order so that the store of keys goes before the
  // files that own its registry.
  std::unique_ptr<AppendOnlyFiles> files;
  std::unique_ptr<LeaderboardStore> boards;
  std::unique_ptr<CommandDispatcher> dispatcher;
  SessionState session;
};

}  // namespace feedcore::server::testing

#endif  // FEEDCORE_SERVER_TESTS_APPEND_ONLY_FIXTURE_H_
