#include "transaction_commands.h"

#include <string>
#include <utility>
#include <vector>

#include "command_dispatcher.h"

namespace feedcore::server {
namespace {

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
  call.reply->ArrayHeader(queued.size());
  for (const std::vector<std::string>& args : queued) {
    call.server->dispatcher->RunQueued(args, *call.session, *call.reply);
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
