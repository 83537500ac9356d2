// Unit tests of the member-name dictionary of feedcore-server's sorted-set
// keys (server/member_dictionary.h): names are freed when
// their member leaves the board and the last pin goes, and their memory
// given back, ids are reused only with a new generation, releases held
// back during a save, and restore's checks. Also the server options'
// protected mode.
#include "member_dictionary.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "server_options.h"

namespace feedcore::server {
namespace {

std::string Name(size_t i) { return absl::StrCat("element:", i); }

// A dictionary with a stand-in for its key's board: the ids in `on_board`.
struct Dictionary {
  absl::flat_hash_set<MemberId> on_board;
  MemberDictionary members{
      [this](MemberId id) { return on_board.contains(id); }};

  // ZADD of a new member: pinned, put on the board, unpinned.
  MemberId Add(const std::string& name) {
    const MemberId id = members.Intern(name).value();
    on_board.insert(id);
    members.Unpin(id, /*maybe_absent=*/false);
    return id;
  }
  // ZREM: pinned if present, taken off the board, unpinned.
  void Remove(const std::string& name) {
    const std::optional<MemberId> id = members.PinIfPresent(name);
    if (!id.has_value()) return;
    on_board.erase(*id);
    members.Unpin(*id, /*maybe_absent=*/true);
  }
};

TEST_CASE("removed names are freed and the memory follows the live names") {
  Dictionary d;
  MemberDictionary& members = d.members;
  const size_t empty_bytes = members.stats().bytes;
  std::vector<MemberId> ids;
  for (size_t i = 0; i < 100'000; ++i) {
    ids.push_back(d.Add(Name(i)));
  }
  // Never released: ids 1, 2, 3... as a dictionary without reuse gives.
  CHECK(ids.front() == 1);
  CHECK(ids.back() == 100'000);
  CHECK(members.size() == 100'000);
  const MemberNameStats full = members.stats();
  CHECK(full.names == 100'000);
  // Slots of 32 bytes plus a hash index of about 5 bytes per slot.
  CHECK(full.bytes < 100'000 * 48);
  for (size_t i = 0; i < 100'000; ++i) d.Remove(Name(i));
  CHECK(members.size() == 0);
  const MemberNameStats after = members.stats();
  CHECK(after.names == 0);
  // One spare chunk (32 KiB) may stay; everything else is given back.
  CHECK(after.bytes <= empty_bytes + 64 * 1024);
  CHECK(!members.Find(Name(7)).has_value());
  CHECK(!members.Contains(ids[7]));
}

TEST_CASE("a reused slot gets a new generation, so old ids stay dead") {
  Dictionary d;
  MemberDictionary& members = d.members;
  const MemberId alice = d.Add("alice");
  d.Remove("alice");
  const MemberId bob = d.Add("bob");
  CHECK(bob != alice);
  CHECK((bob & 0xffffffffu) == (alice & 0xffffffffu));  // the same slot
  CHECK(!members.Contains(alice));
  CHECK(members.Contains(bob));
  const std::vector<LeaderboardEntry> entries = {{alice, 1, 0}, {bob, 2, 1}};
  const auto names = members.NamesOf(entries);
  CHECK(!names[0].has_value());
  CHECK(names[1] == "bob");
}

TEST_CASE("long names, empty names and names with any bytes") {
  Dictionary d;
  MemberDictionary& members = d.members;
  const std::string long_name(1000, 'x');
  const std::string binary("a\0b\r\n", 5);
  const MemberId a = d.Add(long_name);
  const MemberId b = d.Add("");
  const MemberId c = d.Add(binary);
  CHECK(d.Add(long_name) == a);
  CHECK(members.Find("") == b);
  const auto names = members.NamesOf({{a, 0, 0}, {b, 0, 0}, {c, 0, 0}});
  CHECK(names[0] == long_name);
  CHECK(names[1] == "");
  CHECK(names[2] == binary);
  CHECK(members.stats().bytes >= 1000);
  d.Remove(long_name);
  d.Remove("");
  d.Remove(binary);
  CHECK(members.size() == 0);
}

TEST_CASE("releases held back during a save keep names and ids") {
  Dictionary d;
  MemberDictionary& members = d.members;
  const MemberId a = d.Add("a");
  const MemberId b = d.Add("b");
  members.HoldReleases();
  d.Remove("a");
  d.Remove("b");
  // Still there for the copy, and added again with the same id.
  std::vector<MemberId> ids;
  std::vector<std::string> names;
  members.CopyNames(ids, names);
  CHECK(ids == std::vector<MemberId>{a, b});
  CHECK(d.Add("b") == b);
  members.ResumeReleases();
  // "a" is freed now; "b" was added again and stays.
  CHECK(!members.Find("a").has_value());
  CHECK(members.Find("b") == b);
  CHECK(members.size() == 1);
}

TEST_CASE("restore takes ids with generations and checks them") {
  Dictionary d;
  MemberDictionary& members = d.members;
  const MemberId reused = (MemberId{3} << 32) | 5;
  REQUIRE(members.Restore({reused, 1}, {"x", "y"}).ok());
  CHECK(members.Find("x") == reused);
  CHECK(members.Find("y") == MemberId{1});
  CHECK(members.Contains(reused));
  // The free slots in between are used for new names.
  const MemberId z = d.Add("z");
  CHECK((z & 0xffffffffu) == 2);
  CHECK(!members.Restore({}, {"again"}).ok());  // not empty

  Dictionary other_dictionary;
  MemberDictionary& other = other_dictionary.members;
  CHECK(!other.Restore({1, 1}, {"a", "b"}).ok());
  CHECK(!other.Restore({1, 2}, {"a", "a"}).ok());
  CHECK(!other.Restore({MemberId{1} << 32}, {"a"}).ok());  // slot part 0
  CHECK(!other.Restore({1}, {"a", "b"}).ok());
  CHECK(other.size() == 0);
  REQUIRE(other.Restore({}, {"a", "b"}).ok());  // no ids: 1, 2
  CHECK(other.Find("b") == MemberId{2});
}

TEST_CASE("a name stays while pinned and goes with the last pin") {
  Dictionary d;
  MemberDictionary& members = d.members;
  // Two ZADD NX of a new name: both pin it, one adds the member.
  const MemberId first = members.Intern("n").value();
  const MemberId second = members.Intern("n").value();
  CHECK(first == second);
  d.on_board.insert(first);
  // A ZREM that ran in between takes it off and unpins: the name stays,
  // since the two ZADDs still hold pins.
  const MemberId removing = members.PinIfPresent("n").value();
  d.on_board.erase(removing);
  members.Unpin(removing, /*maybe_absent=*/true);
  CHECK(members.Find("n") == first);
  // The adder saw the member on the board; the other's NX did not apply.
  // The last Unpin still checks, because the removal marked the name.
  members.Unpin(first, /*maybe_absent=*/false);
  CHECK(members.Find("n") == first);
  members.Unpin(second, /*maybe_absent=*/false);
  CHECK(!members.Find("n").has_value());
  CHECK(!members.Contains(first));
}

TEST_CASE("a name whose member is on the board is kept by the check") {
  Dictionary d;
  MemberDictionary& members = d.members;
  const MemberId id = d.Add("m");
  // An XX that did not apply (say GT) marks it; the member is still there.
  const MemberId pinned = members.PinIfPresent("m").value();
  members.Unpin(pinned, /*maybe_absent=*/true);
  CHECK(members.Find("m") == id);
  // A write that failed for a new name frees that name.
  const MemberId fresh = members.Intern("fresh").value();
  members.Unpin(fresh, /*maybe_absent=*/true);
  CHECK(!members.Find("fresh").has_value());
  // XX of a name nobody has pins nothing and gives nothing.
  CHECK(!members.PinIfPresent("nobody").has_value());
  CHECK(members.size() == 1);
  // An Unpin without a pin is ignored: the name stays.
  members.Unpin(id, /*maybe_absent=*/true);
  d.on_board.erase(id);
  members.Unpin(id, /*maybe_absent=*/true);
  CHECK(members.Find("m") == id);
}

TEST_CASE("protected mode: no password, no listening beyond loopback") {
  ServerOptions options;
  CHECK(ValidateServerOptions(options).ok());
  options.address = "0.0.0.0";
  const absl::Status refused = ValidateServerOptions(options);
  CHECK(absl::IsFailedPrecondition(refused));
  CHECK(refused.message().find("--requirepass_file") !=
        absl::string_view::npos);
  CHECK(refused.message().find("--protected_mode=no") !=
        absl::string_view::npos);
  options.requirepass = "pw";
  CHECK(ValidateServerOptions(options).ok());
  options.requirepass.clear();
  options.protected_mode = false;
  CHECK(ValidateServerOptions(options).ok());

  CHECK(IsLoopbackAddress("127.0.0.1"));
  CHECK(IsLoopbackAddress("127.1.2.3"));
  CHECK(IsLoopbackAddress("::1"));
  CHECK(IsLoopbackAddress("::ffff:127.0.0.1"));
  CHECK(!IsLoopbackAddress("0.0.0.0"));
  CHECK(!IsLoopbackAddress("::"));
  CHECK(!IsLoopbackAddress("10.0.0.1"));
  CHECK(!IsLoopbackAddress("localhost"));
}

TEST_CASE("the client limits are checked") {
  ServerOptions options;
  options.idle_timeout_seconds = -1;
  CHECK(absl::IsInvalidArgument(ValidateServerOptions(options)));
  options.idle_timeout_seconds = 0;
  options.client_query_buffer_limit = 10;
  CHECK(absl::IsInvalidArgument(ValidateServerOptions(options)));
  options.client_query_buffer_limit = 0;  // no limit
  CHECK(ValidateServerOptions(options).ok());
  options.client_output_buffer_limit = 1;
  CHECK(absl::IsInvalidArgument(ValidateServerOptions(options)));
}

}  // namespace
}  // namespace feedcore::server
