#include "transaction_commands.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "append_only.h"
#include "command_dispatcher.h"

namespace feedcore::server {
namespace {

// Whether the command named `name` can be part of EXEC's one durable
// write (AppendOnlyFiles::RunAsOneWrite): every command but those that
// wait for the disk (the admin commands: SAVE, BGREWRITEAOF...), which
// would wait for the group itself.
bool WritesAsOne(const CommandCall& call, absl::string_view name) {
  const CommandSpec* spec = call.server->commands->Find(name);
  if (spec == nullptr) return true;  // answers an error, writes nothing
  return std::find(spec->flags.begin(), spec->flags.end(), "admin") ==
         spec->flags.end();
}

void Multi(CommandCall& call) {
  TransactionState& transaction = call.session->transaction;
  if (transaction.active) {
    // Not a refusal of the transaction: Redis goes on queueing.
    call.reply->Error("ERR MULTI calls can not be nested");
    return;
  }
  transaction.active = true;
  call.reply->SimpleString("OK");
}

void Exec(CommandCall& call) {
  TransactionState& transaction = call.session->transaction;
  if (!transaction.active) {
    call.reply->Error("ERR EXEC without MULTI");
    return;
  }
  if (transaction.refused) {
    transaction.Reset();
    call.reply->Error(
        "EXECABORT Transaction discarded because of previous errors.");
    return;
  }
  if (!transaction.watched.AllUnchanged()) {
    transaction.Reset();
    call.reply->NullArray();
    return;
  }
  std::vector<std::vector<std::string>> queued = std::move(transaction.queued);
  transaction.Reset();
  const size_t reply_start = call.reply->buffer().size();
  const auto run = [&] {
    call.reply->ArrayHeader(queued.size());
    for (const std::vector<std::string>& args : queued) {
      call.server->dispatcher->RunQueued(args, *call.session, *call.reply);
    }
  };
  AppendOnlyFiles* files = call.server->append_only;
  if (files == nullptr ||
      !std::all_of(queued.begin(), queued.end(), [&](const auto& args) {
        return WritesAsOne(call, args[0]);
      })) {
    return run();
  }
  if (absl::Status s = files->RunAsOneWrite(run); !s.ok()) {
    // Applied but not durable: the replies are replaced by the error.
    call.reply->buffer().resize(reply_start);
    ReplyError(call, s);
  }
}

void Discard(CommandCall& call) {
  TransactionState& transaction = call.session->transaction;
  if (!transaction.active) {
    call.reply->Error("ERR DISCARD without MULTI");
    return;
  }
  transaction.Reset();
  call.reply->SimpleString("OK");
}

void Watch(CommandCall& call) {
  TransactionState& transaction = call.session->transaction;
  if (transaction.active) {
    call.reply->Error("ERR WATCH inside MULTI is not allowed");
    return;
  }
  for (size_t i = 1; i < call.args.size(); ++i) {
    transaction.watched.Add(*call.server->watched_keys, call.args[i]);
  }
  call.reply->SimpleString("OK");
}

void Unwatch(CommandCall& call) {
  call.session->transaction.watched.Clear();
  call.reply->SimpleString("OK");
}

}  // namespace

bool RunsInsideMulti(const CommandSpec& spec) {
  return spec.handler == Exec || spec.handler == Discard ||
         spec.handler == Multi || spec.handler == Watch ||
         spec.name == "QUIT" || spec.name == "RESET";
}

absl::Status AddTransactionCommands(CommandTable& table) {
  std::vector<CommandSpec> specs = {
      {"MULTI", 1, {"noscript", "loading", "stale", "fast"}, 0, 0, 0, Multi},
      {"EXEC",
       1,
       {"noscript", "loading", "stale", "skip_slowlog"},
       0,
       0,
       0,
       Exec,
       /*exclusive=*/true},
      {"DISCARD",
       1,
       {"noscript", "loading", "stale", "fast"},
       0,
       0,
       0,
       Discard},
      {"WATCH", -2, {"noscript", "loading", "stale", "fast"}, 1, -1, 1, Watch},
      {"UNWATCH",
       1,
       {"noscript", "loading", "stale", "fast"},
       0,
       0,
       0,
       Unwatch},
  };
  for (CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(std::move(spec)); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
