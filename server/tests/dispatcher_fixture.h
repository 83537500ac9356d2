// What the unit tests of feedcore-server's commands run them through: a
// command dispatcher over an in-process engine on a manual clock (no
// sweeper, fan-out inside Publish), a leaderboard store and a name
// registry (unless the options name one), with one session; and the RESP pieces
// their expected replies are built from.
#ifndef FEEDCORE_SERVER_TESTS_DISPATCHER_FIXTURE_H_
#define FEEDCORE_SERVER_TESTS_DISPATCHER_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "command_dispatcher.h"
#include "feedcore/feedcore.h"
#include "leaderboard_store.h"

namespace feedcore::server {

// The manual clock's time at the start, unless the options say otherwise.
inline constexpr Micros kDispatcherFixtureStart = 1'000'000'000;

struct DispatcherFixtureOptions {
  Micros start = kDispatcherFixtureStart;
  // The fixture sets the clock, and turns off the sweeper and the fan-out
  // threads.
  EngineOptions engine;
  LeaderboardOptions boards;
  DispatcherOptions dispatcher;
};

class DispatcherFixture {
 public:
  explicit DispatcherFixture(const DispatcherFixtureOptions& o = {})
      : clock_(std::make_shared<ManualClock>(o.start)) {
    EngineOptions engine = o.engine;
    engine.clock = clock_;
    engine.sweep_interval = 0;
    engine.fanout_threads = 0;
    engine_ = FeedEngine::Create(engine).value();
    boards_ = LeaderboardStore::Create(o.boards).value();
    DispatcherOptions dispatcher = o.dispatcher;
    if (dispatcher.names == nullptr) dispatcher.names = &names_;
    dispatcher_ = CommandDispatcher::Create(engine_.get(), boards_.get(),
                                            nullptr, nullptr, dispatcher)
                      .value();
    session_ = dispatcher_->NewSession();
  }

  // Runs one command and returns its raw reply.
  std::string Run(const std::vector<std::string>& args) {
    std::string out;
    dispatcher_->Execute(args, session_, out);
    return out;
  }

  SessionState& session() { return session_; }
  void NewSession() { session_ = dispatcher_->NewSession(); }
  ManualClock& clock() { return *clock_; }
  NameRegistry& names() { return names_; }
  const CommandDispatcher& dispatcher() { return *dispatcher_; }

 private:
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<InProcessFeedEngine> engine_;
  std::unique_ptr<LeaderboardStore> boards_;
  NameRegistry names_;
  std::unique_ptr<CommandDispatcher> dispatcher_;
  SessionState session_;
};

// A RESP bulk string.
inline std::string Bulk(const std::string& s) {
  return absl::StrCat("$", s.size(), "\r\n", s, "\r\n");
}

inline bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_TESTS_DISPATCHER_FIXTURE_H_
