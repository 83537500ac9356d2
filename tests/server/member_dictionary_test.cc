// Unit tests of the member-name dictionary of feedcore-server's sorted-set
// keys (examples/feed-server/member_dictionary.h): names are freed when
// released and their memory given back, ids are reused only with a new
// generation, releases held back during a save, and restore's checks.
// Also the server options' protected mode.
#include "member_dictionary.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server_options.h"

namespace feedcore::server {
namespace {

std::string Name(size_t i) { return absl::StrCat("element:", i); }

TEST_CASE("released names are freed and the memory follows the live names") {
  MemberDictionary members;
  const size_t empty_bytes = members.stats().bytes;
  std::vector<MemberId> ids;
  for (size_t i = 0; i < 100'000; ++i) {
    ids.push_back(members.Intern(Name(i)).value());
  }
  // Never released: ids 1, 2, 3... as a dictionary without reuse gives.
  CHECK(ids.front() == 1);
  CHECK(ids.back() == 100'000);
  CHECK(members.size() == 100'000);
  const MemberNameStats full = members.stats();
  CHECK(full.names == 100'000);
  // Slots of 32 bytes plus a hash index of about 5 bytes per slot.
  CHECK(full.bytes < 100'000 * 48);
  for (size_t i = 0; i < 100'000; ++i) members.Release(Name(i));
  CHECK(members.size() == 0);
  const MemberNameStats after = members.stats();
  CHECK(after.names == 0);
  // One spare chunk (32 KiB) may stay; everything else is given back.
  CHECK(after.bytes <= empty_bytes + 64 * 1024);
  CHECK(!members.Find(Name(7)).has_value());
  CHECK(!members.Contains(ids[7]));
}

TEST_CASE("a reused slot gets a new generation, so old ids stay dead") {
  MemberDictionary members;
  const MemberId alice = members.Intern("alice").value();
  members.Release("alice");
  const MemberId bob = members.Intern("bob").value();
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
  MemberDictionary members;
  const std::string long_name(1000, 'x');
  const std::string binary("a\0b\r\n", 5);
  const MemberId a = members.Intern(long_name).value();
  const MemberId b = members.Intern("").value();
  const MemberId c = members.Intern(binary).value();
  CHECK(members.Intern(long_name).value() == a);
  CHECK(members.Find("") == b);
  const auto names = members.NamesOf({{a, 0, 0}, {b, 0, 0}, {c, 0, 0}});
  CHECK(names[0] == long_name);
  CHECK(names[1] == "");
  CHECK(names[2] == binary);
  CHECK(members.stats().bytes >= 1000);
  members.Release(long_name);
  members.Release("");
  members.Release(binary);
  CHECK(members.size() == 0);
}

TEST_CASE("releases held back during a save keep names and ids") {
  MemberDictionary members;
  const MemberId a = members.Intern("a").value();
  const MemberId b = members.Intern("b").value();
  members.HoldReleases();
  members.Release("a");
  members.Release("b");
  // Still there for the copy, and added again with the same id.
  std::vector<MemberId> ids;
  std::vector<std::string> names;
  members.CopyNames(ids, names);
  CHECK(ids == std::vector<MemberId>{a, b});
  CHECK(members.Intern("b").value() == b);
  members.ResumeReleases();
  // "a" is freed now; "b" was added again and stays.
  CHECK(!members.Find("a").has_value());
  CHECK(members.Find("b") == b);
  CHECK(members.size() == 1);
}

TEST_CASE("restore takes ids with generations and checks them") {
  MemberDictionary members;
  const MemberId reused = (MemberId{3} << 32) | 5;
  REQUIRE(members.Restore({reused, 1}, {"x", "y"}).ok());
  CHECK(members.Find("x") == reused);
  CHECK(members.Find("y") == MemberId{1});
  CHECK(members.Contains(reused));
  // The free slots in between are used for new names.
  const MemberId z = members.Intern("z").value();
  CHECK((z & 0xffffffffu) == 2);
  CHECK(!members.Restore({}, {"again"}).ok());  // not empty

  MemberDictionary other;
  CHECK(!other.Restore({1, 1}, {"a", "b"}).ok());
  CHECK(!other.Restore({1, 2}, {"a", "a"}).ok());
  CHECK(!other.Restore({MemberId{1} << 32}, {"a"}).ok());  // slot part 0
  CHECK(!other.Restore({1}, {"a", "b"}).ok());
  CHECK(other.size() == 0);
  REQUIRE(other.Restore({}, {"a", "b"}).ok());  // no ids: 1, 2
  CHECK(other.Find("b") == MemberId{2});
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
