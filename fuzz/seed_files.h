// Writing a seed of a target whose first input byte picks a mode: each seed
// is written twice, once per mode, as `<name>_<as_is_suffix>` (mode 0: the
// bytes as they are) and `<name>_resealed` (mode 1: checksums recomputed
// before parsing).
#ifndef FEEDCORE_FUZZ_SEED_FILES_H_
#define FEEDCORE_FUZZ_SEED_FILES_H_

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_check.h"

namespace feedcore::fuzz {

inline void WriteSeedPair(const std::filesystem::path& dir,
                          const std::string& name, const std::string& bytes,
                          const std::string& as_is_suffix) {
  for (const char mode : {'\0', '\1'}) {
    const std::filesystem::path path =
        dir / (name + "_" + (mode == '\0' ? as_is_suffix : "resealed"));
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.put(mode);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    FUZZ_CHECK(out.good());
    std::printf("%s: %zu bytes\n", path.c_str(), bytes.size() + 1);
  }
}

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_SEED_FILES_H_
