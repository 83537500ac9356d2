// Resident memory of this process, from /proc/self/statm (Linux).
#ifndef FEEDCORE_BENCH_SOAK_RESIDENT_MEMORY_H_
#define FEEDCORE_BENCH_SOAK_RESIDENT_MEMORY_H_

#include <unistd.h>

#include <cstddef>
#include <fstream>

namespace feedcore::bench {

// Bytes resident now; 0 when /proc is not available.
inline size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t total_pages = 0, resident_pages = 0;
  if (!(statm >> total_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_SOAK_RESIDENT_MEMORY_H_
