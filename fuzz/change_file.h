// What the change-file fuzz targets and their seed writers share: resealing,
// which recomputes every frame's checksum so that mutated bytes reach the
// decoding of record bodies behind the checksums.
//
// The layout resealing walks is the one src/stream/change_frame.cc
// documents (docs/formats.md, "Change files and log segments"):
//   header  "FEEDLOG\0" | u32 version (3)
//   frame   u32 body length | u64 XXH3 of body | body
// with every XXH3 seeded with kChangeFileChecksumSeed. Only the frames are
// walked: the body (kind, varint field mask, then the fields it names) is
// left to the mutations, and a header of another version is rejected
// before any frame is read, which is why the seeds must be current files.
// Log segments of a durable store are change files too, so the store
// directory fuzzer (durable_store_open_fuzzer.cc) reseals them the same way.
#ifndef FEEDCORE_FUZZ_CHANGE_FILE_H_
#define FEEDCORE_FUZZ_CHANGE_FILE_H_

#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace feedcore::fuzz {

inline constexpr uint64_t kChangeFileChecksumSeed = 0x666565646c6f6731ULL;

// Recomputes every frame checksum that lies inside `bytes`; stops at the
// first frame whose body runs past the end.
inline void ResealChangeFile(std::string& bytes) {
  constexpr size_t kHeader = 12, kFrameHeader = 12;
  for (size_t at = kHeader;
       bytes.size() >= at && bytes.size() - at >= kFrameHeader;) {
    uint32_t length = 0;
    for (int i = 3; i >= 0; --i) {
      length = (length << 8) | static_cast<uint8_t>(bytes[at + i]);
    }
    const size_t body = at + kFrameHeader;
    if (length > bytes.size() - body) return;
    const uint64_t sum = XXH3_64bits_withSeed(bytes.data() + body, length,
                                              kChangeFileChecksumSeed);
    for (int i = 0; i < 8; ++i)
      bytes[at + 4 + i] = static_cast<char>(sum >> (8 * i));
    at = body + length;
  }
}

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_CHANGE_FILE_H_
