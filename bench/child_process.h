// Running a measurement in a forked child process, so that no measurement
// reuses memory an earlier one allocated and freed (the memory programs of
// bench/ each measure several systems or modes in one run).
#ifndef FEEDCORE_BENCH_CHILD_PROCESS_H_
#define FEEDCORE_BENCH_CHILD_PROCESS_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace feedcore::bench {

// Returns what `measure()` returns in a child process, passed back through
// a pipe; a value-initialized Result if the child failed. Result must be
// trivially copyable. Exits the program if it cannot fork.
template <typename Result, typename Measure>
Result RunInChild(Measure&& measure) {
  static_assert(std::is_trivially_copyable_v<Result>);
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    std::exit(1);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    close(fds[0]);
    const Result result = measure();
    const ssize_t written = write(fds[1], &result, sizeof(result));
    _exit(written == static_cast<ssize_t>(sizeof(result)) ? 0 : 1);
  }
  close(fds[1]);
  Result result{};
  const ssize_t got = read(fds[0], &result, sizeof(result));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof(result)) || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return Result{};
  }
  return result;
}

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_CHILD_PROCESS_H_
