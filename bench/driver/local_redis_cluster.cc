#include "bench/driver/local_redis_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace feedcore::bench {
namespace {

// What the script printed, kept in an unlinked temporary file: not in the
// cluster's directory, which the script wants empty.
int OpenLog() {
  std::string path =
      (std::filesystem::temp_directory_path() / "feedcore-bench-cluster-XXXXXX")
          .string();
  const int fd = mkstemp(path.data());
  if (fd >= 0) unlink(path.c_str());
  return fd;
}

std::string ReadLog(int fd) {
  std::string text;
  if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0) return text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  return text;
}

// Runs `script verb dir extra...` and returns its exit status (127: it
// could not be run, 128 + N: killed by signal N). Its standard output goes
// to `out` and its standard error to `err` (-1: the driver's own stderr).
int RunScript(const std::string& script, const char* verb,
              const std::string& dir, int out, int err,
              std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {script, verb, dir};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    const int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(out >= 0 ? out : null, STDOUT_FILENO);
    if (err >= 0) dup2(err, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// The script's own lines ("redis-cluster: ..."), the last `count` of them:
// the reason of a failure, without the node logs it also prints.
std::string LastScriptLines(const std::string& log, size_t count) {
  std::vector<absl::string_view> lines;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StartsWith(line, "redis-cluster:")) lines.push_back(line);
  }
  if (lines.empty()) return "it printed nothing";
  const size_t first = lines.size() > count ? lines.size() - count : 0;
  std::string text;
  for (size_t i = first; i < lines.size(); ++i) {
    absl::StrAppend(&text, i == first ? "" : " / ", lines[i]);
  }
  return text;
}

// Runs in the forked guardian: waits until the driver writes a byte
// (stopped already) or goes away (end of file), and in the second case
// becomes `script stop dir`. Only async-signal-safe calls before exec.
[[noreturn]] void Guard(int read_end, char* const* stop_argv) {
  setpgid(0, 0);
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGTTOU, SIG_IGN);
  const int null = open("/dev/null", O_RDWR);
  dup2(null, STDIN_FILENO);
  dup2(null, STDOUT_FILENO);
  char byte;
  ssize_t n;
  do {
    n = read(read_end, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1) _exit(0);
  execv(stop_argv[0], stop_argv);
  _exit(127);
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalRedisCluster>> LocalRedisCluster::Start(
    const std::string& script, size_t replicas_per_master) {
  if (access(script.c_str(), X_OK) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot run '", script, "': ", std::strerror(errno),
                     " (--redis_cluster_script names it)"));
  }
  std::string dir =
      (std::filesystem::temp_directory_path() / "feedcore-bench-cluster-XXXXXX")
          .string();
  if (mkdtemp(dir.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "cannot create a directory for the cluster: ", std::strerror(errno)));
  }

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    std::filesystem::remove(dir);
    return absl::UnavailableError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<std::string> stop_args = {script, "stop", dir};
  std::vector<char*> stop_argv;
  for (std::string& arg : stop_args) stop_argv.push_back(arg.data());
  stop_argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t guardian = fork();
  if (guardian < 0) {
    close(fds[0]);
    close(fds[1]);
    std::filesystem::remove(dir);
    return absl::UnavailableError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (guardian == 0) {
    close(fds[1]);
    Guard(fds[0], stop_argv.data());
  }
  close(fds[0]);
  // The object owns the directory and the guardian from here, so every
  // path below stops whatever the script left running.
  std::unique_ptr<LocalRedisCluster> cluster(
      new LocalRedisCluster(script, dir, guardian, fds[1]));

  const int log = OpenLog();
  const int status =
      RunScript(script, "start", dir, log, log,
                {"--replicas", absl::StrCat(replicas_per_master)});
  const std::string output = ReadLog(log);
  if (log >= 0) close(log);
  if (status != 0) {
    std::fprintf(stderr, "%s", output.c_str());
    return absl::UnavailableError(absl::StrCat(
        script, " start exited with status ", status, ": ",
        status == 127 ? "it could not be run" : LastScriptLines(output, 2)));
  }
  std::ifstream seeds(dir + "/seeds");
  std::string line;
  while (std::getline(seeds, line)) {
    if (!line.empty()) cluster->seeds_.push_back(line);
  }
  if (cluster->seeds_.empty()) {
    return absl::UnavailableError(
        absl::StrCat(script, " start wrote no seeds to ", dir, "/seeds"));
  }
  return cluster;
}

LocalRedisCluster::~LocalRedisCluster() {
  const int status = RunScript(script_, "stop", dir_, -1, -1);
  if (status != 0) {
    std::fprintf(stderr,
                 "feedcore-bench: %s stop %s exited with status %d; its nodes "
                 "may still run\n",
                 script_.c_str(), dir_.c_str(), status);
  }
  const char stopped = 1;
  if (write(guardian_pipe_, &stopped, 1) != 1) {
    // The guardian then sees the end of file and runs the stop again,
    // which finds nothing to do.
  }
  close(guardian_pipe_);
  int ignored = 0;
  while (waitpid(guardian_, &ignored, 0) < 0 && errno == EINTR) {
  }
  // Left only when `start` failed before it made the directory its own.
  std::error_code error;
  std::filesystem::remove(dir_, error);
}

}  // namespace feedcore::bench
