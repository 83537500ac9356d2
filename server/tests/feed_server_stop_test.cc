// FeedServer::Stop ends Run whatever its timers and connections are doing:
// with the active expiry passing back to back (interval 0), a pass whose
// wait has completed but whose handler has not run yet is nearly always
// there when Stop runs, and must not start another wait. A failure hangs
// Run, which the test's timeout reports.
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "asio.hpp"
#include "dispatcher_fixture.h"
#include "doctest/doctest.h"
#include "feed_server.h"

namespace feedcore::server {
namespace {

ServerOptions LoopbackOptions() {
  ServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.threads = 2;
  options.active_expiry_interval_millis = 0;
  return options;
}

TEST_CASE("Stop ends Run while the active expiry passes back to back") {
  DispatcherFixture fixture;
  for (int round = 0; round < 200; ++round) {
    CAPTURE(round);
    auto server = FeedServer::Create(LoopbackOptions(), &fixture.dispatcher());
    REQUIRE(server.ok());
    std::thread serving([&server] { (*server)->Run(); });
    // Stop from another thread at a different point of each round: the
    // first rounds before Run has started anything, the later ones after.
    // A busy wait, not yields: with the expiry passes keeping both cores
    // busy, each yield can give the core away for a whole time slice.
    std::atomic<int> spin{0};
    while (spin.fetch_add(1, std::memory_order_relaxed) < round * 500) {
    }
    (*server)->Stop();
    serving.join();
  }
}

TEST_CASE("Stop closes a connected client and Run returns") {
  DispatcherFixture fixture;
  ServerOptions options = LoopbackOptions();
  options.idle_timeout_seconds = 1;  // an idle timer is armed, too
  auto server = FeedServer::Create(options, &fixture.dispatcher());
  REQUIRE(server.ok());
  std::thread serving([&server] { (*server)->Run(); });

  asio::io_context client_io;
  asio::ip::tcp::socket client(client_io);
  client.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                         (*server)->port()));
  const std::string ping = "*1\r\n$4\r\nPING\r\n";
  asio::write(client, asio::buffer(ping));
  std::string reply(7, '\0');
  asio::read(client, asio::buffer(reply));
  CHECK(reply == "+PONG\r\n");

  (*server)->Stop();
  serving.join();
  char byte;
  asio::error_code error;
  CHECK(client.read_some(asio::buffer(&byte, 1), error) == 0);
  CHECK(error == asio::error::eof);
}

TEST_CASE("the active expiry interval is validated") {
  DispatcherFixture fixture;
  for (const int64_t bad : {int64_t{-1}, kMaxActiveExpiryIntervalMillis + 1}) {
    ServerOptions options = LoopbackOptions();
    options.active_expiry_interval_millis = bad;
    auto server = FeedServer::Create(options, &fixture.dispatcher());
    REQUIRE_FALSE(server.ok());
    CHECK(server.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(server.status().message().find("active expiry interval") !=
          std::string::npos);
  }
}

}  // namespace
}  // namespace feedcore::server
