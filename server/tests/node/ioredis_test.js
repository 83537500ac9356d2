// The calls a chat server makes through ioredis, unchanged: connecting
// (ioredis sends CLIENT SETNAME, CLIENT SETINFO and an INFO ready check),
// MULTI/EXEC transactions, WATCH, pipelines, a sorted-set leaderboard,
// a chat room's publish/subscribe (subscribe, psubscribe, the "message"
// and "pmessage" events), feeds through call() and sendCommand(),
// scanStream, INFO and CLIENT.
//
// Usage: node ioredis_test.js PORT SERVER_NAME [feedcore]
//
// ioredis_test.py runs it against a real redis-server first (so every
// expectation but the feed commands' is what Redis does), then against
// feedcore-server with "feedcore", which adds the FEED.* calls and the
// client library fields that Redis 7.2 added to CLIENT INFO. Any failed
// check, rejected promise or connection error exits 1, naming the check.

"use strict";

const assert = require("node:assert/strict");
const Redis = require("ioredis");

const [port, serverName, mode] = process.argv.slice(2);
const isFeedcore = mode === "feedcore";
const PINNED_IOREDIS = require("./package.json").dependencies.ioredis;

function connect(options = {}) {
  const client = new Redis({
    host: "127.0.0.1",
    port: Number(port),
    // One attempt: a refused connection fails the test instead of retrying.
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    ...options,
  });
  client.on("error", (error) => {
    console.error(`FAIL: ${serverName}: connection error: ${error.message}`);
    process.exit(1);
  });
  return client;
}

function parseInfo(text) {
  const fields = {};
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) {
      fields[line.slice(0, colon)] = line.slice(colon + 1);
    }
  }
  return fields;
}

function commandCalls(infoText, command) {
  const stats = parseInfo(infoText)[`cmdstat_${command}`];
  return stats ? Number(/calls=(\d+)/.exec(stats)[1]) : 0;
}

async function checkConnect(r) {
  assert.equal(await r.ping(), "PONG", "PING");
  const info = await r.client("INFO");
  assert.match(info, / name=chat-api /, `CLIENT INFO after connect: ${info}`);
  if (isFeedcore) {
    assert.match(info, / lib-name=ioredis lib-ver=(\S+)/,
      `CLIENT SETINFO of the connect handshake: ${info}`);
    assert.equal(/ lib-ver=(\S+)/.exec(info)[1], PINNED_IOREDIS,
      "lib-ver is the installed ioredis");
  }
  assert.equal(await r.flushdb(), "OK", "FLUSHDB");
}

async function checkTransactions(r, other) {
  const before = await r.info("commandstats");
  const results = await r.multi()
    .zadd("leaderboard", 100, "alice", 80, "bob")
    .zincrby("leaderboard", 30, "bob")
    .zrevrange("leaderboard", 0, -1, "WITHSCORES")
    .zcard("leaderboard")
    .exec();
  assert.deepEqual(results, [
    [null, 2], [null, "110"], [null, ["bob", "110", "alice", "100"]],
    [null, 2],
  ], "multi().exec() results");
  const after = await r.info("commandstats");
  assert.equal(commandCalls(after, "multi"), commandCalls(before, "multi") + 1,
    "multi() sent MULTI");
  assert.equal(commandCalls(after, "exec"), commandCalls(before, "exec") + 1,
    "exec() sent EXEC");

  // A command refused while queued: EXECABORT, nothing applied.
  await assert.rejects(
    r.multi().zadd("leaderboard", 1, "carol").call("ZADD", "leaderboard")
      .exec(),
    (error) => {
      assert.match(error.message, /^EXECABORT/, "EXECABORT reply");
      assert.match(error.previousErrors[0].message,
        /wrong number of arguments for 'zadd' command/,
        "the queued command's error");
      return true;
    }, "exec() of a transaction with a refused command");
  assert.equal(await r.zscore("leaderboard", "carol"), null,
    "the aborted transaction applied nothing");

  // An error while EXEC runs fails that command only.
  const mixed = await r.multi()
    .zadd("leaderboard", 5, "carol")
    .call("ZADD", "leaderboard", "not-a-number", "dave")
    .exec();
  assert.deepEqual(mixed[0], [null, 1], "the command before the error");
  assert.ok(mixed[1][0] instanceof Error, "the failing command's error");
  assert.equal(await r.zrem("leaderboard", "carol"), 1, "ZREM");

  // multi({ pipeline: false }) sends MULTI at once; each command is QUEUED.
  await r.multi({ pipeline: false });
  assert.equal(await r.zincrby("leaderboard", 1, "alice"), "QUEUED",
    "a command after MULTI is QUEUED");
  assert.deepEqual(await r.exec(), [[null, "101"]], "EXEC of one command");

  // WATCH: a concurrent write from another client aborts (exec() is null),
  // the retry commits.
  await r.watch("leaderboard");
  const seen = Number(await r.zscore("leaderboard", "bob"));
  await other.zincrby("leaderboard", 5, "bob");
  assert.equal(await r.multi().zadd("leaderboard", seen + 1, "bob").exec(),
    null, "exec() after a watched key changed");
  assert.equal(await r.zscore("leaderboard", "bob"), "115",
    "the aborted transaction left the other client's write");
  await r.watch("leaderboard");
  const fresh = Number(await r.zscore("leaderboard", "bob"));
  assert.deepEqual(
    await r.multi().zadd("leaderboard", fresh + 1, "bob").exec(),
    [[null, 0]], "exec() of the retry");
  assert.equal(await r.zscore("leaderboard", "bob"), "116", "retry applied");
  await r.watch("leaderboard");
  assert.equal(await r.unwatch(), "OK", "UNWATCH");
  await other.zincrby("leaderboard", 1, "bob");
  assert.deepEqual(await r.multi().zscore("leaderboard", "bob").exec(),
    [[null, "117"]], "exec() after UNWATCH");
}

async function checkPipelinesAndLeaderboard(r) {
  const pipeline = r.pipeline();
  for (let i = 0; i < 200; i++) pipeline.zadd("weekly", i * 10, `player:${i}`);
  pipeline.zincrby("weekly", 5000, "player:7");
  pipeline.zrevrange("weekly", 0, 2, "WITHSCORES");
  pipeline.zrevrank("weekly", "player:7");
  pipeline.zrank("weekly", "player:0");
  pipeline.zscore("weekly", "player:199");
  pipeline.zmscore("weekly", "player:1", "nobody");
  pipeline.zcount("weekly", 100, "(200");
  pipeline.zrangebyscore("weekly", 1000, "+inf", "LIMIT", 0, 2);
  pipeline.zrem("weekly", "player:0", "nobody");
  pipeline.zcard("weekly");
  const results = await pipeline.exec();
  assert.ok(results.every(([error]) => error === null),
    `no errors in the pipeline: ${JSON.stringify(results)}`);
  const replies = results.map(([, reply]) => reply);
  assert.deepEqual(replies.slice(0, 200), Array(200).fill(1), "ZADD replies");
  assert.deepEqual(replies.slice(200), [
    "5070", ["player:7", "5070", "player:199", "1990", "player:198", "1980"],
    0, 0, "1990", ["10", null], 10, ["player:100", "player:101"], 1, 199,
  ], "leaderboard replies in a pipeline");

  // An error in the middle of a pipeline fails that command only.
  const mixed = await r.pipeline()
    .zadd("weekly", 1, "x")
    .call("NOSUCHCOMMAND")
    .zscore("weekly", "x")
    .exec();
  assert.deepEqual(mixed[0], [null, 1], "the command before the error");
  assert.match(mixed[1][0].message, /unknown command/, "the error");
  assert.deepEqual(mixed[2], [null, "1"], "the command after the error");

  // Auto-pipelining: concurrent calls batched into one write.
  const auto = connect({ enableAutoPipelining: true });
  const scores = await Promise.all(Array.from({ length: 100 },
    (_, i) => auto.zincrby("auto", 1, `m${i % 10}`)));
  assert.deepEqual(scores.slice(-10), Array(10).fill("10"),
    "auto-pipelined ZINCRBY");
  assert.equal(await auto.quit(), "OK", "QUIT");
}

async function checkFeeds(r) {
  // Members follow a room by name; a message is an activity of the room.
  const room = "room:general";
  for (const user of ["user:alice", "user:bob", "user:carol"]) {
    assert.equal(await r.call("FEED.FOLLOW", user, room), 1, "FEED.FOLLOW");
  }
  assert.equal(await r.call("FEED.FOLLOW", "user:alice", room), 0,
    "FEED.FOLLOW of an existing edge");
  const publish = r.pipeline();
  for (let i = 0; i < 12; i++) {
    publish.call("FEED.PUBLISH", room, 9000 + i, 1_700_000_000_000_000 + i,
      JSON.stringify({ text: `message ${i}` }));
  }
  assert.deepEqual(await publish.exec(), Array(12).fill([null, 1]),
    "FEED.PUBLISH in a pipeline");
  // A message whose id the server hands out, sent again as a client
  // retrying after a lost reply: the same key gets the same id.
  const sent = await r.call("FEED.PUBLISH", room, "*", "*", "now",
    "IDEMPOTENCY", "client-msg-1");
  assert.match(sent, /^\d+$/, "FEED.PUBLISH * replies the id handed out");
  assert.equal(await r.call("FEED.PUBLISH", room, "*", "*", "now",
    "IDEMPOTENCY", "client-msg-1"), sent, "a retried publish");

  const seen = [];
  let cursor = "0";
  let first = true;
  while (first || cursor !== "0") {
    const args = ["FEED.READ", "user:bob", "LIMIT", 5, "NAMES"];
    if (!first) args.push("CURSOR", cursor);
    const [next, entries] = await r.call(...args);
    for (const [id, actor, ts, , payload] of entries) {
      assert.equal(actor, room, "the entry's actor, by name");
      assert.equal(typeof ts, "number", "ts is an integer reply");
      seen.push([id, payload]);
    }
    cursor = next;
    first = false;
  }
  assert.deepEqual(seen.map(([id]) => id), [sent,
    ...Array.from({ length: 12 }, (_, i) => String(9011 - i))],
  "FEED.READ pages, newest first, the retried message once");
  assert.deepEqual(JSON.parse(seen[1][1]), { text: "message 11" },
    "payload");

  const counts = await r.sendCommand(
    new Redis.Command("FEED.COUNTS", [room], { replyEncoding: "utf8" }));
  assert.deepEqual(counts, [3, 0], "FEED.COUNTS through sendCommand");
  await assert.rejects(r.call("FEED.READ", "user:bob", "LIMIT", 0),
    /LIMIT must be an integer/, "a bad FEED.READ is a reply error");
}

async function checkKeyspaceInfoAndClient(r) {
  const setup = r.pipeline();
  for (let i = 0; i < 120; i++) setup.zadd(`room:${i}:online`, 1, "alice");
  await setup.exec();
  const keys = await new Promise((resolve, reject) => {
    const found = [];
    const stream = r.scanStream({ match: "room:*", count: 15 });
    stream.on("data", (batch) => found.push(...batch));
    stream.on("end", () => resolve(found));
    stream.on("error", reject);
  });
  assert.deepEqual([...new Set(keys)].sort(),
    Array.from({ length: 120 }, (_, i) => `room:${i}:online`).sort(),
    "scanStream({ match }) finds every key once");

  const total = 3 + 120; // leaderboard, weekly, auto, the rooms
  assert.equal(await r.dbsize(), total, "DBSIZE");
  assert.equal(await r.exists("weekly", "nokey"), 1, "EXISTS");
  assert.equal(await r.type("weekly"), "zset", "TYPE");
  assert.equal(await r.del("auto", "nokey"), 1, "DEL");

  const server = parseInfo(await r.info("server"));
  assert.match(server.redis_version, /^\d+\.\d+\.\d+$/, "redis_version");
  assert.equal(server.tcp_port, port, "tcp_port");
  const keyspace = parseInfo(await r.info("keyspace"));
  assert.match(keyspace.db0, new RegExp(`^keys=${total - 1},`),
    `INFO keyspace: ${keyspace.db0}`);
  assert.ok("connected_clients" in parseInfo(await r.info()), "INFO");

  assert.equal(await r.client("SETNAME", "chat-api-7"), "OK", "SETNAME");
  assert.equal(await r.client("GETNAME"), "chat-api-7", "GETNAME");
  const id = await r.client("ID");
  assert.equal(typeof id, "number", "CLIENT ID");
  const list = await r.client("LIST");
  assert.match(list, new RegExp(`^id=${id} .* name=chat-api-7 `, "m"),
    `CLIENT LIST: ${list}`);
  const [seconds, micros] = await r.time();
  assert.ok(Number(seconds) > 1_600_000_000 && Number(micros) < 1e6,
    `TIME: ${seconds} ${micros}`);
  assert.equal(await r.flushdb(), "OK", "FLUSHDB");
  assert.equal(await r.dbsize(), 0, "DBSIZE after FLUSHDB");
}

// A chat room: one connection in subscriber mode, messages published on
// the other.
async function checkPubSub(r) {
  const sub = r.duplicate({ connectionName: "chat-room" });
  const next = (event) => new Promise((resolve) => {
    sub.once(event, (...args) => resolve(args));
  });
  assert.equal(await sub.subscribe("room:7", "room:8"), 2, "subscribe");
  assert.equal(await sub.psubscribe("room:*"), 3, "psubscribe");
  const message = next("message");
  const pmessage = next("pmessage");
  assert.equal(await r.publish("room:7", "hello room"), 2, "publish");
  assert.deepEqual(await message, ["room:7", "hello room"], "message event");
  assert.deepEqual(await pmessage, ["room:*", "room:7", "hello room"],
    "pmessage event");
  assert.deepEqual(await r.pubsub("NUMSUB", "room:8"), ["room:8", 1],
    "pubsub numsub");
  assert.equal(await sub.unsubscribe("room:8"), 2, "unsubscribe");
  assert.equal(await sub.quit(), "OK", "the subscriber's QUIT");
}

async function main() {
  const watchdog = setTimeout(() => {
    console.error(`FAIL: ${serverName}: no answer within 45 s`);
    process.exit(1);
  }, 45_000);
  const r = connect({ connectionName: "chat-api" });
  const other = r.duplicate({ connectionName: "chat-worker" });
  other.on("error", (error) => {
    console.error(`FAIL: ${serverName}: connection error: ${error.message}`);
    process.exit(1);
  });
  await checkConnect(r);
  await checkTransactions(r, other);
  await checkPipelinesAndLeaderboard(r);
  await checkPubSub(r);
  if (isFeedcore) await checkFeeds(r);
  await checkKeyspaceInfoAndClient(r);
  assert.equal(await other.quit(), "OK", "QUIT");
  assert.equal(await r.quit(), "OK", "QUIT");
  clearTimeout(watchdog);
  console.log(`ok: ${serverName}: ioredis ${PINNED_IOREDIS} connect, ` +
    "multi/exec, watch, pipelines, leaderboard, pub/sub, " +
    (isFeedcore ? "feeds, " : "") + "scanStream, info, client");
}

main().catch((error) => {
  console.error(`FAIL: ${serverName}: ${error.stack || error}`);
  process.exit(1);
});
