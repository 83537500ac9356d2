// Fuzz target: ReadChangeFile and ChangeFileWriter::Open on arbitrary
// bytes (a change file damaged on disk, or not a change file at all).
//
// The first byte chooses whether the rest is read as it is or resealed
// first (every frame checksum recomputed, see change_file.h), so that
// mutations reach the decoding of record bodies. Checked:
//   * reading fails only with InvalidArgument or DataLoss, as documented;
//   * the records read, appended to a new change file and read back, come
//     back identical and with no torn tail;
//   * opening the file for appending fails only with InvalidArgument or
//     DataLoss, and after a successful open (which cuts off a torn last
//     frame) the file reads back without a torn tail and with the same
//     records as before.
// The seeds (fuzz/corpus/change_file_fuzzer) are real change files written
// by fuzz/write_change_file_seeds.cc.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "change_file.h"
#include "feedcore/change_file.h"
#include "feedcore/change_stream.h"
#include "fuzz_check.h"
#include "snapshot_file.h"

namespace feedcore::fuzz {
namespace {

bool Documented(const absl::Status& status) {
  if (absl::IsInvalidArgument(status) || absl::IsDataLoss(status)) return true;
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return false;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  FUZZ_CHECK(out.good());
}

// Appends `records` to a new change file and reads them back.
void CheckRewrite(const std::vector<ChangeRecord>& records,
                  const std::string& path) {
  std::remove(path.c_str());
  {
    absl::StatusOr<std::unique_ptr<ChangeFileWriter>> writer =
        ChangeFileWriter::Open(path);
    FUZZ_CHECK(writer.ok());
    std::vector<ChangeRecordPtr> pointers;
    for (const ChangeRecord& r : records) {
      pointers.push_back(std::make_shared<const ChangeRecord>(r));
    }
    FUZZ_CHECK((*writer)->Append(pointers).ok());
  }
  const absl::StatusOr<ChangeFileContents> again = ReadChangeFile(path);
  std::remove(path.c_str());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(!again->torn_tail);
  FUZZ_CHECK(again->records == records);
}

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace feedcore;
  using namespace feedcore::fuzz;
  static const std::string* const path =
      new std::string(ScratchSnapshotPath("changes.log"));
  static const std::string* const rewrite_path =
      new std::string(ScratchSnapshotPath("rewrite.log"));
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) ResealChangeFile(bytes);
  WriteFile(*path, bytes);

  const absl::StatusOr<ChangeFileContents> read = ReadChangeFile(*path);
  if (read.ok()) {
    CheckRewrite(read->records, *rewrite_path);
  } else {
    FUZZ_CHECK(Documented(read.status()));
  }

  absl::StatusOr<std::unique_ptr<ChangeFileWriter>> writer =
      ChangeFileWriter::Open(*path);
  if (!writer.ok()) {
    FUZZ_CHECK(Documented(writer.status()));
  } else {
    writer->reset();
    const absl::StatusOr<ChangeFileContents> reopened = ReadChangeFile(*path);
    if (read.ok()) {
      FUZZ_CHECK(reopened.ok());
      FUZZ_CHECK(!reopened->torn_tail);
      FUZZ_CHECK(reopened->records == read->records);
    }
  }
  std::remove(path->c_str());
  return 0;
}
