// Fuzz target: follower and followee list cursors, as a client passes them
// back in ListOptions::cursor to Followers and Following.
//
// As the timeline cursor target: the cursor is either the input's bytes or
// the input's numbers encoded with the cursor codec, and every read is held
// to an oracle computed from the whole list read without a cursor:
//   * the read succeeds exactly when the cursor decodes and names this list
//     (followers or followees) of this entity; otherwise InvalidArgument;
//   * a page is the first `limit` ids after the cursor's position in the
//     list's order (followers by (shard, id), followees by id), with a next
//     cursor exactly when more follow;
//   * a decoded cursor encodes and decodes back to itself.
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "contract/cursor.h"
#include "feed_fixture.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "fuzz_check.h"
#include "fuzz_input.h"

namespace feedcore::fuzz {
namespace {

using internal::CursorKind;
using internal::FollowListCursor;

absl::StatusOr<EntityPage> List(const InProcessFeedEngine& engine, bool followers,
                                EntityId entity, const ListOptions& options) {
  return followers ? engine.Followers(entity, options)
                   : engine.Following(entity, options);
}

std::vector<EntityId> WholeList(const InProcessFeedEngine& engine, bool followers,
                                EntityId entity) {
  ListOptions options;
  options.limit = engine.options().max_page_size;
  std::vector<EntityId> out;
  for (;;) {
    absl::StatusOr<EntityPage> page = List(engine, followers, entity, options);
    FUZZ_CHECK(page.ok());
    out.insert(out.end(), page->ids.begin(), page->ids.end());
    if (page->next_cursor.empty()) return out;
    options.cursor = page->next_cursor;
  }
}

// The position of `id` in a list's order. Follower lists are ordered by the
// follower's shard first, which is the engine's documented placement:
// XXH3_64bits(id) % shards.
std::pair<uint64_t, EntityId> ListKey(bool followers, EntityId id) {
  if (!followers) return {0, id};
  return {XXH3_64bits(&id, sizeof(id)) % FeedFixture::kShards, id};
}

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace feedcore;
  using namespace feedcore::fuzz;
  static const FeedFixture* const fixture = new FeedFixture();
  const InProcessFeedEngine& engine = *fixture->engine;

  FuzzInput in(data, size);
  const bool structured = in.Bool();
  const bool followers = in.Bool();
  const EntityId entity = in.Below(FeedFixture::kEntities + 2);
  ListOptions options;
  options.limit = 1 + in.Below(FeedFixture::kMaxPageSize);
  if (structured) {
    const uint64_t fields[] = {
        in.Below(4) == 0 ? in.U64() : (followers ? 0 : 1),
        in.Below(4) == 0 ? in.U64() : entity,
        in.Below(4) == 0 ? in.U64() : in.Below(FeedFixture::kShards + 1),
        in.Below(4) == 0 ? in.U64()
                         : in.Below(FeedFixture::kFirstExtraFollower +
                                    FeedFixture::kExtraFollowers + 1)};
    options.cursor = internal::EncodeCursor(CursorKind::kFollowList, fields);
  } else {
    options.cursor = in.Rest();
  }

  const absl::StatusOr<FollowListCursor> decoded =
      internal::DecodeFollowListCursor(options.cursor);
  if (decoded.ok()) {
    const absl::StatusOr<FollowListCursor> again =
        internal::DecodeFollowListCursor(
            internal::EncodeFollowListCursor(*decoded));
    FUZZ_CHECK(again.ok() && *again == *decoded);
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(decoded.status()));
  }

  const absl::StatusOr<EntityPage> page =
      List(engine, followers, entity, options);
  const bool first_page = options.cursor.empty();
  const bool accepted =
      first_page || (decoded.ok() && decoded->followers == followers &&
                     decoded->entity == entity);
  FUZZ_CHECK(page.ok() == accepted);
  if (!page.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(page.status()));
    return 0;
  }
  // A followee list is ordered by id alone; its cursors' shard is ignored.
  std::vector<EntityId> expected = WholeList(engine, followers, entity);
  if (!first_page) {
    const std::pair<uint64_t, EntityId> after{followers ? decoded->shard : 0,
                                              decoded->last};
    std::erase_if(expected, [&](EntityId id) {
      return !(ListKey(followers, id) > after);
    });
  }
  const bool more = expected.size() > options.limit;
  if (more) expected.resize(options.limit);
  FUZZ_CHECK(page->ids == expected);
  FUZZ_CHECK(page->next_cursor.empty() == !more);
  return 0;
}
