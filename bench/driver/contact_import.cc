// contact-import: a user imports a contact list of `contacts` accounts,
// each of which posted `contact_posts` times: one FollowMany call for the
// whole list, against one Follow call per contact; first without
// back-fill (the edges alone), then with a back-fill of `contact_posts`
// (both copy the same entries). Every round imports for a new user, on
// each system in turn; the figure is the time of one import. Both users
// must then read the same timeline.
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

// FollowMany of the whole list, and one Follow per contact, each importing
// for a new user (appended to `batch` or `single`).
std::vector<SystemUnderTest> ImportSystems(FeedEngine& engine,
                                           const DriverOptions& options,
                                           const FollowOptions& follow,
                                           EntityId& next_importer,
                                           std::vector<EntityId>& batch,
                                           std::vector<EntityId>& single) {
  std::vector<SystemUnderTest> systems;
  systems.push_back({kFeedcore,
                     [&engine, &options, &follow, &next_importer, &batch](
                         size_t, std::vector<double>& samples) -> absl::Status {
                       const EntityId importer = next_importer++;
                       std::vector<FollowPair> pairs;
                       pairs.reserve(options.contacts);
                       for (size_t c = 0; c < options.contacts; ++c) {
                         pairs.push_back({importer, kFirstContact + c});
                       }
                       const Stopwatch::time_point start = Stopwatch::now();
                       absl::Status status =
                           engine.FollowMany(pairs, follow).status();
                       samples.push_back(MicrosSince(start) / 1000.0);
                       batch.push_back(importer);
                       return status;
                     },
                     {},
                     false});
  systems.push_back(
      {kFollowPerPair,
       [&engine, &options, &follow, &next_importer, &single](
           size_t, std::vector<double>& samples) -> absl::Status {
         const EntityId importer = next_importer++;
         const Stopwatch::time_point start = Stopwatch::now();
         for (size_t c = 0; c < options.contacts; ++c) {
           absl::Status status =
               engine.Follow(importer, kFirstContact + c, follow).status();
           if (!status.ok()) return status;
         }
         samples.push_back(MicrosSince(start) / 1000.0);
         single.push_back(importer);
         return absl::OkStatus();
       },
       {},
       false});
  return systems;
}

// Both ways of importing leave the same timeline.
void CheckImports(RunContext& context, const FeedEngine& engine,
                  const std::vector<EntityId>& batch,
                  const std::vector<EntityId>& single) {
  if (batch.empty() || single.empty()) return;
  ReadOptions read;
  read.limit = 100;
  absl::StatusOr<Page> batch_page = engine.ReadTimeline(batch[0], read);
  absl::StatusOr<Page> single_page = engine.ReadTimeline(single[0], read);
  if (!batch_page.ok() || !single_page.ok()) {
    context.answers.Fail(
        kScenario, kFeedcore,
        batch_page.ok() ? single_page.status() : batch_page.status());
    return;
  }
  context.answers.Check(kScenario, "timeline after the import", kFollowPerPair,
                        PageIds(*batch_page), PageIds(*single_page));
}

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
  EntityId next_importer = kFirstImporter;
  std::vector<EntityId> batch_importers, single_importers;
  // Without back-fill the import is the edges alone, where one lock hold
  // per shard for the whole list is what differs.
  follow.backfill = 0;
  std::vector<SystemUnderTest> systems =
      ImportSystems(engine, options, follow, next_importer, batch_importers,
                    single_importers);
  RunInterleaved(context, kScenario, "importing without back-fill",
                 options.import_rounds, systems);
  AddFigures(
      context, kScenario,
      absl::StrCat("import ", options.contacts, " contacts, no back-fill"),
      "ms", systems);
  batch_importers.clear();
  single_importers.clear();
  follow.backfill = options.contact_posts;
  systems = ImportSystems(engine, options, follow, next_importer,
                          batch_importers, single_importers);
  RunInterleaved(context, kScenario, "importing", options.import_rounds,
                 systems);
  CheckImports(context, engine, batch_importers, single_importers);
  AddFigures(context, kScenario,
             absl::StrCat("import ", options.contacts, " contacts, back-fill ",
                          options.contact_posts, " each"),
             "ms", systems);
}

}  // namespace feedcore::bench
