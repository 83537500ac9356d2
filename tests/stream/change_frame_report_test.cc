// Tests of ReportChangeFrames: a whole file is reported with its records
// and batch ends; a torn tail, a flipped byte in a middle frame, a record
// that breaks the sequence run and a bad header are each found at the
// right byte offset, with what was whole before them and what follows.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stream/change_frame.h"

namespace feedcore::internal {
namespace {

// A segment-like file: `batches` batches of `per_batch` records each,
// sequences from `first`, every batch closed by a batch end. `*frame_at`
// gets each record frame's offset.
std::string SegmentBytes(uint64_t first, int batches, int per_batch,
                         std::vector<size_t>* frame_at) {
  std::string bytes = ChangeFileHeader();
  uint64_t sequence = first;
  for (int b = 0; b < batches; ++b) {
    for (int r = 0; r < per_batch; ++r) {
      ChangeRecord record;
      record.sequence = sequence++;
      record.kind = ChangeKind::kTimelinePut;
      record.entity = 1000 + record.sequence;
      record.owners = {7, 8};
      frame_at->push_back(bytes.size());
      REQUIRE(AppendChangeFrame(record, &bytes));
    }
    AppendBatchEnd(&bytes);
  }
  return bytes;
}

TEST_CASE("a whole file is reported with its records and batch ends") {
  std::vector<size_t> frames;
  const std::string bytes = SegmentBytes(5, 3, 2, &frames);
  absl::StatusOr<ChangeFrameReport> report =
      ReportChangeFrames(bytes, "seg", 5);
  REQUIRE(report.ok());
  CHECK(report->damage.empty());
  CHECK(report->records == 6);
  CHECK(report->batch_ends == 3);
  CHECK(report->first_sequence == 5);
  CHECK(report->last_sequence == 10);
  CHECK(report->clean_end == bytes.size());
  CHECK(report->committed_end == bytes.size());
  CHECK(report->committed_records == 6);
}

TEST_CASE("a file cut in the middle of a frame is a torn tail there") {
  std::vector<size_t> frames;
  std::string bytes = SegmentBytes(1, 3, 2, &frames);
  // Cut inside the fifth record (the first of the third batch).
  bytes.resize(frames[4] + 15);
  absl::StatusOr<ChangeFrameReport> report =
      ReportChangeFrames(bytes, "seg", 1);
  REQUIRE(report.ok());
  CHECK(report->torn_tail);
  CHECK(report->damage == "frame length runs past the end of the file");
  CHECK(report->clean_end == frames[4]);
  CHECK(report->records == 4);
  CHECK(report->committed_end == frames[4]);
  CHECK(report->committed_records == 4);
  CHECK(report->records_after == 0);
}

TEST_CASE("a flipped byte in a middle frame is found at that frame") {
  std::vector<size_t> frames;
  std::string bytes = SegmentBytes(1, 4, 2, &frames);
  // The last byte of the third record's body: the frame before it is the
  // batch end of the first batch.
  bytes[frames[3] - 1] ^= 0x20;
  absl::StatusOr<ChangeFrameReport> report =
      ReportChangeFrames(bytes, "seg", 1);
  REQUIRE(report.ok());
  CHECK_FALSE(report->torn_tail);
  CHECK(report->damage == "frame fails its checksum");
  CHECK(report->clean_end == frames[2]);
  CHECK(report->records == 2);
  CHECK(report->committed_end == frames[2]);
  // The rest of the file: the fourth record and two batches of two.
  CHECK(report->records_after == 5);
  // The reader that recovery uses refuses the same file at the same byte.
  size_t clean_end = 0;
  bool torn = false;
  absl::Status scanned =
      ScanChangeFrames(bytes, "seg", nullptr, &clean_end, &torn);
  CHECK(scanned.code() == absl::StatusCode::kDataLoss);
  CHECK(scanned.message().find("at byte " + std::to_string(frames[2])) !=
        std::string::npos);
}

TEST_CASE("records after the last batch end are not committed") {
  std::vector<size_t> frames;
  std::string bytes = SegmentBytes(1, 2, 3, &frames);
  bytes.resize(bytes.size() - kChangeFrameHeaderBytes);  // the last batch end
  absl::StatusOr<ChangeFrameReport> report =
      ReportChangeFrames(bytes, "seg", 1);
  REQUIRE(report.ok());
  CHECK(report->damage.empty());
  CHECK(report->records == 6);
  CHECK(report->committed_end == frames[3]);
  CHECK(report->committed_records == 3);
  CHECK(report->committed_last_sequence == 3);
}

TEST_CASE("a record out of its sequence run is damage at its frame") {
  std::vector<size_t> frames;
  const std::string bytes = SegmentBytes(1, 2, 2, &frames);
  absl::StatusOr<ChangeFrameReport> report =
      ReportChangeFrames(bytes, "log-2.fclog", 2);
  REQUIRE(report.ok());
  CHECK(report->damage == "record has sequence 1, expected 2");
  CHECK(report->clean_end == frames[0]);
  CHECK(report->records == 0);
  CHECK(report->records_after == 3);
  // Without a required start, any run is accepted.
  report = ReportChangeFrames(bytes, "seg", 0);
  REQUIRE(report.ok());
  CHECK(report->damage.empty());
}

TEST_CASE("a file without the header is InvalidArgument naming it") {
  absl::StatusOr<ChangeFrameReport> report =
      ReportChangeFrames("FEEDLOX\0\3\0\0\0", "bad.fclog", 0);
  CHECK(report.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(report.status().message().find("bad.fclog") != std::string::npos);
}

}  // namespace
}  // namespace feedcore::internal
