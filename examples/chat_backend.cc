// A minimal chat backend: channels are feeds. Joining a channel follows
// it; a message is an activity the channel publishes, so it is kept once
// in the channel's own feed (its history) and copied into each member's
// home timeline (the inbox of every channel joined). History pages with
// cursors, read markers give the unread count of each channel, and a
// muted channel stays joined but leaves the inbox.
//
// Time comes from a ManualClock, so the output is the same on every run.
// Exits with status 1 on any error or unexpected result.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"

namespace {

using feedcore::EntityId;
using feedcore::FeedEngine;
using feedcore::InProcessFeedEngine;
using feedcore::MarkedFeed;

// 2024-01-01T09:00:00Z.
constexpr feedcore::Micros kStart =
    1'704'099'600LL * feedcore::kMicrosPerSecond;

// Users and channels share one id space: both are entities of the graph.
constexpr EntityId kAda = 1, kBo = 2, kCy = 3;
constexpr EntityId kGeneral = 100, kRandom = 101, kReleases = 102;

const char* Name(EntityId id) {
  switch (id) {
    case kAda:
      return "ada";
    case kBo:
      return "bo";
    case kCy:
      return "cy";
    case kGeneral:
      return "#general";
    case kRandom:
      return "#random";
    case kReleases:
      return "#releases";
    default:
      return "?";
  }
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "error: %s\n", what.c_str());
  std::exit(1);
}

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) Fail(std::string(what) + ": " + status.ToString());
}

template <typename T>
T Check(absl::StatusOr<T> result, const char* what) {
  Check(result.status(), what);
  return *std::move(result);
}

// For results that are not errors but would be wrong.
void Expect(bool holds, const char* what) {
  if (!holds) Fail(std::string("unexpected result: ") + what);
}

class Chat {
 public:
  Chat(std::unique_ptr<InProcessFeedEngine> engine,
       std::shared_ptr<feedcore::ManualClock> clock)
      : engine_(std::move(engine)), clock_(std::move(clock)) {}

  InProcessFeedEngine& engine() { return *engine_; }

  // Posts `text` from `sender` to `channel`, one second after the last
  // message. The channel is the activity's actor, so that the message
  // reaches the channel's members; the sender rides in the payload.
  feedcore::EntryKey Post(EntityId channel, EntityId sender,
                          const std::string& text) {
    clock_->Advance(feedcore::kMicrosPerSecond);
    const feedcore::Activity message = {
        .id = ++last_id_,
        .actor = channel,
        .ts = clock_->Now(),
        .payload = std::string(Name(sender)) + ": " + text};
    const feedcore::PublishResult result =
        Check(engine_->Publish(message), "Publish");
    Expect(result.created, "a new message is stored");
    std::printf("  %-9s %-30s inboxes reached: %zu\n", Name(channel),
                message.payload.c_str(), result.fanned_out);
    return {message.ts, message.id};
  }

  // The badge of `user` in `channel`: messages after its read marker (all
  // of them before the first marker), counted up to 99 as a badge shows.
  size_t Unread(EntityId user, EntityId channel) const {
    const feedcore::ReadMarker marker = Check(
        engine_->GetReadMarker(user, MarkedFeed::Own(channel), 99), "marker");
    return marker.unread;
  }

 private:
  std::unique_ptr<InProcessFeedEngine> engine_;
  std::shared_ptr<feedcore::ManualClock> clock_;
  feedcore::ActivityId last_id_ = 0;
};

void PrintPage(const feedcore::Page& page, bool with_channel) {
  for (const feedcore::StoredEntry& e : page.entries) {
    std::printf("    %s%s%s\n", with_channel ? Name(e.actor) : "",
                with_channel ? " " : "", e.payload.c_str());
  }
}

void PrintBadges(Chat& chat, EntityId user) {
  std::printf("  %s's unread:", Name(user));
  for (EntityId channel : {kGeneral, kRandom, kReleases}) {
    std::printf(" %s %zu", Name(channel), chat.Unread(user, channel));
  }
  std::printf("\n");
}

}  // namespace

int main() {
  auto clock = std::make_shared<feedcore::ManualClock>(kStart);
  feedcore::EngineOptions options;
  options.clock = clock;
  // Messages live a week; a chat that keeps history for good would store
  // it elsewhere and keep only the recent part here.
  options.default_ttl = 7 * feedcore::kMicrosPerDay;
  Chat chat(Check(FeedEngine::Create(options), "FeedEngine::Create"), clock);
  InProcessFeedEngine& engine = chat.engine();

  std::printf("Members join channels (one FollowMany call):\n");
  const std::vector<feedcore::FollowPair> joins = {
      {kAda, kGeneral}, {kAda, kRandom}, {kAda, kReleases},
      {kBo, kGeneral},  {kBo, kRandom},  {kCy, kGeneral}};
  for (const feedcore::FollowResult& joined :
       Check(engine.FollowMany(joins), "FollowMany")) {
    Expect(joined.created, "each join is new");
  }
  std::printf("  ada: 3 channels, bo: 2, cy: 1\n");

  std::printf("Messages:\n");
  chat.Post(kGeneral, kBo, "morning all");
  chat.Post(kRandom, kCy, "anyone seen my keyboard?");
  chat.Post(kGeneral, kCy, "standup in 5");
  chat.Post(kReleases, kBo, "v2.3 is out");
  chat.Post(kGeneral, kBo, "moved to room 4");
  const feedcore::EntryKey newest_general =
      chat.Post(kGeneral, kAda, "on my way");
  PrintBadges(chat, kAda);
  Expect(chat.Unread(kAda, kGeneral) == 4, "four unread in #general");

  // Scrolling back through a channel: newest first, two messages a page,
  // each page asked for with the previous page's cursor until it is empty.
  std::printf("ada opens #general and scrolls back, 2 messages a page:\n");
  feedcore::ReadOptions history;
  history.limit = 2;
  history.hydrate = true;  // the payloads, not only the keys
  size_t pages = 0;
  do {
    const feedcore::Page page =
        Check(engine.ReadOwn(kGeneral, history), "ReadOwn");
    std::printf("  page %zu\n", ++pages);
    PrintPage(page, /*with_channel=*/false);
    history.cursor = page.next_cursor;
  } while (!history.cursor.empty());
  Expect(pages == 2, "four messages make two pages");

  // Having shown the newest message, the client moves the marker to it.
  Expect(Check(engine.SetReadMarker(kAda, MarkedFeed::Own(kGeneral),
                                    newest_general),
               "SetReadMarker"),
         "the marker moves forward");
  // Markers only move forward: a late request from an older screen does
  // not mark messages unread again (SetMarkerOptions::force would).
  Expect(
      !Check(engine.SetReadMarker(kAda, MarkedFeed::Own(kGeneral), {kStart, 1}),
             "SetReadMarker"),
      "an older key leaves the marker");
  PrintBadges(chat, kAda);
  Expect(chat.Unread(kAda, kGeneral) == 0, "#general is read");

  // Muting keeps the membership (the channel still counts unread and
  // reads as before) but takes the channel out of the inbox, now and for
  // what it publishes until Unmute.
  std::printf("ada mutes #random:\n");
  const feedcore::RelationResult muted =
      Check(engine.Mute(kAda, kRandom), "Mute");
  std::printf("  %zu message left ada's inbox\n", muted.removed);
  Expect(muted.changed && muted.removed == 1, "one #random message left");
  chat.Post(kRandom, kBo, "found it under the desk");
  chat.Post(kReleases, kBo, "v2.3.1 fixes the login bug");

  std::printf("ada's inbox, every channel joined and not muted:\n");
  feedcore::ReadOptions inbox;
  inbox.limit = 10;
  inbox.hydrate = true;
  const feedcore::Page page = Check(engine.ReadTimeline(kAda, inbox), "inbox");
  PrintPage(page, /*with_channel=*/true);
  Expect(page.entries.size() == 6, "six messages outside #random");
  for (const feedcore::StoredEntry& e : page.entries) {
    Expect(e.actor != kRandom, "no #random message in the inbox");
  }
  PrintBadges(chat, kAda);
  Expect(chat.Unread(kAda, kRandom) == 2, "muted #random still counts");
  const feedcore::MutedPage muted_list = Check(engine.Muted(kAda, {}), "Muted");
  Expect(muted_list.actors.size() == 1 && muted_list.actors[0].actor == kRandom,
         "ada mutes #random only");

  // Leaving a channel is Unfollow: its messages leave the member's inbox.
  std::printf("bo leaves #random:\n");
  const feedcore::UnfollowResult left =
      Check(engine.Unfollow(kBo, kRandom), "Unfollow");
  std::printf("  %zu messages left bo's inbox\n", left.removed);
  Expect(left.was_following && left.removed == 2, "bo had two from #random");
  Expect(Check(engine.FollowerCount(kRandom), "FollowerCount") == 1,
         "#random has one member left");

  std::printf("ok\n");
  return 0;
}
