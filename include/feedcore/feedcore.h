// Umbrella header: everything an embedding program needs.
#ifndef FEEDCORE_FEEDCORE_H_
#define FEEDCORE_FEEDCORE_H_

#include "feedcore/change_file.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/durable_store.h"
#include "feedcore/feed_engine.h"
#include "feedcore/feed_facets.h"
#include "feedcore/friends_leaderboard.h"
#include "feedcore/leaderboard.h"
#include "feedcore/leaderboard_options.h"
#include "feedcore/name_registry.h"
#include "feedcore/options.h"
#include "feedcore/seasonal_leaderboard.h"
#include "feedcore/snapshot.h"
#include "feedcore/stats.h"
#include "feedcore/types.h"

#endif  // FEEDCORE_FEEDCORE_H_
