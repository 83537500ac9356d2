#include "bench/driver/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace feedcore::bench {
namespace {

constexpr char kLoopback[] = "127.0.0.1";
constexpr int kPortAttempts = 5;
constexpr auto kStartupTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(5);

// A port on 127.0.0.1 that nothing listens on right now: bind to port 0 and
// let the kernel pick. Another process may take it before redis-server
// binds it; Start then tries again.
absl::StatusOr<int> FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::UnavailableError(std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  inet_pton(AF_INET, kLoopback, &address.sin_addr);
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string reason = std::strerror(errno);
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("no free loopback port: ", reason));
  }
  close(fd);
  return ntohs(address.sin_port);
}

// True when a server on `port` answers "+PONG" to an inline PING. Plain
// sockets, so starting the server needs no client library.
bool AnswersPing(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, kLoopback, &address.sin_addr);
  bool pong = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) ==
      0) {
    timeval timeout{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    constexpr std::string_view kPing = "PING\r\n";
    if (write(fd, kPing.data(), kPing.size()) ==
        static_cast<ssize_t>(kPing.size())) {
      char reply[16] = {};
      const ssize_t n = read(fd, reply, sizeof(reply) - 1);
      pong = n >= 5 && std::string_view(reply, 5) == "+PONG";
    }
  }
  close(fd);
  return pong;
}

// Waits for `pid` to exit for at most `timeout`; true if it did.
bool WaitForExit(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno == ECHILD)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void Stop(pid_t pid) {
  kill(pid, SIGTERM);
  if (!WaitForExit(pid, kStopTimeout)) {
    kill(pid, SIGKILL);
    WaitForExit(pid, kStopTimeout);
  }
}

// Runs in the forked child: becomes redis-server or exits with 127.
[[noreturn]] void ExecServer(const std::string& binary, int port,
                             const std::string& dir,
                             const std::vector<std::string>& extra_args) {
  // Dies with the driver, whatever way the driver ends.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int log =
      open((dir + "/redis.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (log >= 0) {
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    close(log);
  }
  const std::string port_text = std::to_string(port);
  std::vector<std::string> args = {binary,    "--bind",
                                   kLoopback, "--port",
                                   port_text, "--save",
                                   "",        "--appendonly",
                                   "no",      "--protected-mode",
                                   "yes",     "--daemonize",
                                   "no",      "--dir",
                                   dir,       "--loglevel",
                                   "warning"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  _exit(127);  // exec failed: binary missing or not executable
}

}  // namespace

absl::StatusOr<std::unique_ptr<RedisServer>> RedisServer::Start(
    const std::string& binary, const std::vector<std::string>& extra_args) {
  std::string last_error = "no attempt made";
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    absl::StatusOr<int> port = FreeLoopbackPort();
    if (!port.ok()) return port.status();
    std::string dir_template =
        (std::filesystem::temp_directory_path() / "feedcore-bench-redis-XXXXXX")
            .string();
    if (mkdtemp(dir_template.data()) == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("cannot create a directory for redis-server: ",
                       std::strerror(errno)));
    }
    const std::string dir = dir_template;
    const pid_t pid = fork();
    if (pid < 0) {
      std::filesystem::remove_all(dir);
      return absl::UnavailableError(
          absl::StrCat("fork: ", std::strerror(errno)));
    }
    if (pid == 0) ExecServer(binary, *port, dir, extra_args);
    // The object owns the child from here, so every path below stops it.
    std::unique_ptr<RedisServer> server(new RedisServer(pid, *port, dir));
    const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (AnswersPing(*port)) return server;
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        server->pid_ = -1;  // reaped: nothing left to stop
        // Exited: 127 means the exec failed, anything else usually that the
        // port was taken between our probe and its bind.
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
          return absl::UnavailableError(absl::StrCat(
              "cannot run '", binary,
              "' (not installed? scripts/install-deps installs it)"));
        }
        std::ifstream log(dir + "/redis.log");
        std::ostringstream text;
        text << log.rdbuf();
        last_error =
            absl::StrCat("redis-server exited during startup on port ", *port,
                         "; its log: ", text.str().substr(0, 400));
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      last_error = absl::StrCat("redis-server did not answer PING on port ",
                                *port, " within 10 s");
    }
  }
  return absl::UnavailableError(last_error);
}

RedisServer::~RedisServer() {
  if (pid_ > 0) Stop(pid_);
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace feedcore::bench
