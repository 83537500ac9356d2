// contact-import: a user imports a contact list of `contacts` accounts,
// each of which posted `contact_posts` times: one FollowMany call for the
// whole list, against one Follow call per contact, each with a back-fill
// of `contact_posts` (so both copy the same entries). Every round imports
// for a new user, on each system in turn; the figure is the time of one
// import. Both users must then read the same timeline.
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/driver/interleave.h"
#include "bench/driver/scenario.h"
#include "bench/driver/stats.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "contact-import";
constexpr char kFollowPerPair[] = "feedcore_follow_per_pair";
constexpr EntityId kFirstContact = 1'000'000;
constexpr EntityId kFirstImporter = 10;

}  // namespace

void RunContactImport(RunContext& context) {
  const DriverOptions& options = context.options;
  absl::StatusOr<FeedSetup> feed = NewFeedSetup(options.timeline_cap);
  if (!feed.ok()) {
    context.answers.Fail(kScenario, kFeedcore, feed.status());
    return;
  }
  FeedEngine& engine = *feed->engine;
  ActivityId id = 1;
  Micros ts = kBenchStartTime;
  for (size_t c = 0; c < options.contacts; ++c) {
    for (size_t p = 0; p < options.contact_posts; ++p) {
      Activity post;
      post.id = id++;
      post.actor = kFirstContact + c;
      post.ts = ++ts;
      if (absl::Status s = engine.Publish(post).status(); !s.ok()) {
        context.answers.Fail(kScenario, kFeedcore, s);
        return;
      }
    }
  }
  FollowOptions follow;
  follow.backfill = options.contact_posts;
  EntityId next_importer = kFirstImporter;
  std::vector<EntityId> batch_importers, single_importers;
  std::vector<SystemUnderTest> systems;
  systems.push_back(
      {kFeedcore,
       [&](size_t, std::vector<double>& samples) -> absl::Status {
         const EntityId importer = next_importer++;
         std::vector<FollowPair> pairs;
         pairs.reserve(options.contacts);
         for (size_t c = 0; c < options.contacts; ++c) {
           pairs.push_back({importer, kFirstContact + c});
         }
         const Stopwatch::time_point start = Stopwatch::now();
         absl::Status status = engine.FollowMany(pairs, follow).status();
         samples.push_back(MicrosSince(start) / 1000.0);
         batch_importers.push_back(importer);
         return status;
       },
       {},
       false});
  systems.push_back(
      {kFollowPerPair,
       [&](size_t, std::vector<double>& samples) -> absl::Status {
         const EntityId importer = next_importer++;
         const Stopwatch::time_point start = Stopwatch::now();
         for (size_t c = 0; c < options.contacts; ++c) {
           absl::Status status =
               engine.Follow(importer, kFirstContact + c, follow).status();
           if (!status.ok()) return status;
         }
         samples.push_back(MicrosSince(start) / 1000.0);
         single_importers.push_back(importer);
         return absl::OkStatus();
       },
       {},
       false});
  RunInterleaved(context, kScenario, "importing", options.import_rounds,
                 systems);
  if (!batch_importers.empty() && !single_importers.empty()) {
    ReadOptions read;
    read.limit = 100;
    absl::StatusOr<Page> batch = engine.ReadTimeline(batch_importers[0], read);
    absl::StatusOr<Page> single =
        engine.ReadTimeline(single_importers[0], read);
    if (!batch.ok() || !single.ok()) {
      context.answers.Fail(kScenario, kFeedcore,
                           batch.ok() ? single.status() : batch.status());
    } else {
      context.answers.Check(kScenario, "timeline after the import",
                            kFollowPerPair, PageIds(*batch), PageIds(*single));
    }
  }
  AddFigures(context, kScenario,
             absl::StrCat("import ", options.contacts, " contacts"), "ms",
             systems);
}

}  // namespace feedcore::bench
