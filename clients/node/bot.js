#!/usr/bin/env node
// A Kutná Hora starter bot in Node.js. It loads the .proto files at run time (no generated code), joins
// a seat (or takes one handed over by a runner), and plays uniformly random legal options over the
// bidirectional PlayService.Play stream until the game ends. Replace chooseOption() with your strategy.
//
//   npm install                                         # once, in clients/node
//   node bot.js --server localhost:50051 --create --players 2     # create a game, play seat 0
//   node bot.js --server localhost:50051 --game ID [--seat N]     # join a waiting game
//   node bot.js --arena localhost:50061 --register my-bot --key-file my.key    # register (plays no game)
//   node bot.js --arena localhost:50061 --key-file my.key --pool 2 --games 5   # rated games in an arena
//                                                       # (it follows the arena's event stream: a game the arena
//                                                       # abandons is left at once; only rated games count)
//   KUTNAHORA_SERVER=… KUTNAHORA_GAME_ID=… KUTNAHORA_SEAT=… KUTNAHORA_TOKEN=… node bot.js
//                                                       # play a seat a runner already joined
//
// A server out of reach, or a Play stream that drops, is tried again for up to --retry-for seconds (the bot
// says so, and where). Exit status: 0 when the game ended (or the bot registered), 1 when it could not be
// played, 2 for a usage error or a server that stayed out of reach.
"use strict";

const path = require("path");
const crypto = require("crypto");
const fs = require("fs");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const protobuf = require("protobufjs");

const PROTO_ROOT = process.env.KUTNAHORA_PROTOS || path.join(__dirname, "..", "..", "protos");

const USAGE =
  "usage: node bot.js [--server HOST:PORT] (--create [--players N] | --game ID [--seat N]) [--name NAME] [--seed N]" +
  " [--retry-for SECONDS]\n" +
  "       node bot.js --arena HOST:PORT --register NAME --key-file FILE\n" +
  "       node bot.js --arena HOST:PORT [--key-file FILE] [--pool POOLS] [--games N] [--seed N] [--retry-for SECONDS]\n" +
  "  --register: register NAME with the arena, write its API key to --key-file (mode 0600; a file that exists is\n" +
  "  never overwritten), and exit: no game is played.\n" +
  "  --pool: the pools to seek in, comma-separated, such as 2 or 2,4, played at once (default 2).\n" +
  "  --key-file: the bot's arena API key (default $KUTNAHORA_ARENA_KEY).\n";

function usage(message) {
  console.error(`kutnahora-node-bot: ${message}`);
  console.error(
    USAGE +
      "  --arena: rated games; the arena's event stream stays open, a game it reports abandoned is left at once\n" +
      "  and the bot seeks again; --games counts rated (finished) games only, in each pool; 0 plays on.\n" +
      "  --retry-for: seconds to keep retrying a dropped connection (create, join, the Play stream); default 30."
  );
  process.exit(2);
}

function parseArgs(argv) {
  const env = process.env;
  const args = {
    server: env.KUTNAHORA_SERVER || "localhost:50051",
    game: env.KUTNAHORA_GAME_ID || null,
    seat: env.KUTNAHORA_SEAT !== undefined && env.KUTNAHORA_SEAT !== "" ? Number(env.KUTNAHORA_SEAT) : null,
    token: env.KUTNAHORA_TOKEN || null,
    seed: env.KUTNAHORA_BOT_SEED || String(Date.now()),
    tls: Boolean(env.KUTNAHORA_TLS),
    caCert: env.KUTNAHORA_CA_CERT || null,
    create: false,
    players: 2,
    name: "node-random",
    arena: null,
    register: null,
    keyFile: null,
    pool: "2",
    games: 1,
    retryFor: Number(env.KUTNAHORA_RETRY_FOR || 30),
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${flag} needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case "--server": args.server = value(); break;
      case "--game": args.game = value(); args.token = null; break;
      case "--seat": args.seat = Number(value()); break;
      case "--create": args.create = true; args.token = null; break;
      case "--players": args.players = Number(value()); break;
      case "--name": args.name = value(); break;
      case "--seed": args.seed = value(); break;
      case "--arena": args.arena = value(); break;
      case "--key-file": args.keyFile = value(); break;
      case "--register": args.register = value(); break;
      case "--pool": args.pool = value(); break;
      case "--games": args.games = Number(value()); break;
      case "--retry-for": args.retryFor = Number(value()); break;
      case "--help": case "-h":
        console.log(
          "A Kutná Hora starter bot: plays random legal options of a seat, or rated games in an arena.\n" + USAGE +
            "  --arena: rated games; the arena's event stream stays open, a game it reports abandoned is left at once\n" +
            "  and the bot seeks again; --games counts rated (finished) games only, in each pool; 0 plays on.\n" +
            "  --retry-for: seconds to keep retrying a server out of reach (create, join, the Play stream); default 30."
        );
        process.exit(0);
      default: usage(`unknown argument ${flag}`);
    }
  }
  if (args.register) {
    if (!args.arena) usage("--register needs --arena, the arena's address");
    if (!args.keyFile) usage("--register needs --key-file, the file the new key is written to");
    if (pathTaken(args.keyFile)) {
      // The arena shows a key once: a file that may hold one is never overwritten.
      console.error(`kutnahora-node-bot: ${args.keyFile} exists (it may hold a key); name a new file, or delete it first`);
      process.exit(2);
    }
    return args;
  }
  if (args.arena) {
    if (!Number.isInteger(args.games) || args.games < 0) usage("--games must be 0 (play on) or more");
    args.pools = parsePools(args.pool);
    return args;
  }
  if (!args.create && !args.game) usage("say which game: --create, --game ID, or KUTNAHORA_GAME_ID");
  return args;
}

// Whether a path names anything (a dangling symbolic link too, which an exclusive create also refuses).
function pathTaken(file) {
  try {
    fs.lstatSync(file);
    return true;
  } catch (error) {
    return error.code !== "ENOENT";
  }
}

// The pools of --pool: comma-separated (such as 2 or 2,4), each named once.
function parsePools(text) {
  const pools = [...new Set(text.split(",").map((pool) => pool.trim()).filter((pool) => pool))];
  if (pools.length === 0) usage("--pool needs at least one pool, such as 2 or 2,4");
  return pools;
}

// A small seeded generator (mulberry32), so that a seed replays the same choices.
function makeRandom(seed) {
  let state = Number(BigInt.asUintN(32, BigInt(seed)));
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function loadServices() {
  const definition = protoLoader.loadSync(
    ["kutnahora/v1/game_service.proto", "kutnahora/v1/play_service.proto", "kutnahora/v1/arena_service.proto"],
    { includeDirs: [PROTO_ROOT], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true }
  );
  return grpc.loadPackageDefinition(definition).kutnahora.v1;
}

// Every refusal of the server carries a google.rpc.Status in its trailing metadata, with a
// google.rpc.ErrorInfo whose reason says why in one word a program can act on (NOT_YOUR_TURN, SEAT_TAKEN,
// LIMIT_REACHED, ...: the RejectReason names without their prefix). These three messages are all it takes
// to read them.
const RPC_TYPES = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: { nested: { Any: { fields: { type_url: { type: "string", id: 1 }, value: { type: "bytes", id: 2 } } } } },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: "int32", id: 1 },
                message: { type: "string", id: 2 },
                details: { rule: "repeated", type: "google.protobuf.Any", id: 3 },
              },
            },
            ErrorInfo: {
              fields: {
                reason: { type: "string", id: 1 },
                domain: { type: "string", id: 2 },
                metadata: { keyType: "string", type: "string", id: 3 },
              },
            },
          },
        },
      },
    },
  },
});
const Status = RPC_TYPES.lookupType("google.rpc.Status");
const ErrorInfo = RPC_TYPES.lookupType("google.rpc.ErrorInfo");

// The ErrorInfo reason of a refused call ("SEAT_TAKEN", ...), or null when it carries none.
function refusalReason(error) {
  const raw = error && error.metadata ? error.metadata.get("grpc-status-details-bin") : [];
  if (!raw || raw.length === 0) return null;
  const status = Status.decode(raw[0]);
  for (const detail of status.details) {
    if (detail.type_url.endsWith("/google.rpc.ErrorInfo")) {
      const info = ErrorInfo.decode(detail.value);
      if (info.domain === "kutnahora.v1") return info.reason;
    }
  }
  return null;
}

function unary(client, method, request, metadata) {
  return new Promise((resolve, reject) => {
    const callback = (error, response) => (error ? reject(error) : resolve(response));
    if (metadata) client[method](request, metadata, callback);
    else client[method](request, callback);
  });
}

// CreateGame and JoinGame carry a request_id (a UUID): sent again after UNAVAILABLE or DEADLINE_EXCEEDED,
// with backoff, the server answers the retry with the first answer, so a lost reply never costs a second
// game or a second seat.
const TRANSIENT = new Set([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);

async function retrying(client, method, request, retryFor) {
  const attempt = { ...request, request_id: crypto.randomUUID() };
  return withBackoff(() => unary(client, method, attempt), {
    retryFor,
    again: (error) => TRANSIENT.has(error.code),
    tell: tellRetrying(serverAddress, retryFor),
  });
}

// Says once per run of failures that a server is out of reach, where, why, and for how long it is retried.
function tellRetrying(address, retryFor) {
  return (error) =>
    console.error(
      `kutnahora-node-bot: cannot reach ${address} (${String(error.details || error.message).replace(/\.? *Resolution note: *$/, "")}); ` +
        `retrying for up to ${retryFor} s`
    );
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Calls attempt(progress) until it resolves. After an error that again(error) accepts it waits (jittered,
// from `first` ms doubling to 5 s) and calls it again, for up to retryFor seconds of failing in a row: an
// attempt that calls progress() (it got an answer, so the connection worked) starts the count afresh.
// Resolves with null if `stopped` (a promise, or null) settles while it waits.
// The first failure of a run calls tell(error), if given (to say that it retries, and where).
async function withBackoff(attempt, { retryFor, again, first = 200, stopped = null, tell = null }) {
  let failingSince = null;
  let delay = first;
  let stop = false;
  if (stopped) stopped.then(() => (stop = true));
  const progress = () => {
    failingSince = null;
    delay = first;
  };
  for (;;) {
    try {
      return await attempt(progress);
    } catch (error) {
      const first = failingSince === null;
      if (first) failingSince = Date.now();
      if (!again(error) || Date.now() + delay > failingSince + retryFor * 1000) throw error;
      if (first && tell) tell(error);
    }
    await Promise.race([sleep(delay * (0.5 + Math.random() / 2)), stopped || new Promise(() => {})]);
    if (stop) return null;
    delay = Math.min(delay * 2, 5000);
  }
}

// The strategy: every legal option is listed in observation.pending.options; answer with one's index.
function chooseOption(observation, random) {
  const options = observation.pending.options;
  return options[Math.floor(random() * options.length)];
}

// One Play stream of a seat: resolves with the GameEnded message, or with null when `stopped` (a promise,
// or null) settles first, which ends the stream at once (the arena abandoned the game).
function playStream(client, seat, random, stopped, progress = () => {}) {
  const metadata = new grpc.Metadata();
  metadata.add("authorization", `Bearer ${seat.token}`);
  return new Promise((resolve, reject) => {
    const call = client.Play(metadata);
    let answered = -1;
    let over = false;
    const finish = (settle, value) => {
      if (over) return;
      over = true;
      settle(value);
    };
    call.on("data", (message) => {
      progress();
      if (message.message === "your_turn") {
        const observation = message.your_turn.observation;
        const version = Number(observation.version);
        if (version <= answered) return; // already answered this version
        const option = chooseOption(observation, random);
        answered = version;
        call.write({ decision: { version: observation.version, answer: { option_index: option.index } } });
      } else if (message.message === "rejected") {
        console.error(`decision refused (${message.rejected.reason}): ${message.rejected.message}`);
        if (message.rejected.reason === "REJECT_REASON_STALE_VERSION") answered = -1;
      } else if (message.message === "game_ended") {
        call.end();
        finish(resolve, message.game_ended);
      }
    });
    call.on("error", (error) => finish(reject, error));
    call.on("end", () => finish(reject, new Error("the server closed the stream before the game ended")));
    if (stopped) {
      stopped.then(() => {
        if (over) return;
        finish(resolve, null);
        call.cancel(); // its CANCELLED error comes after the promise settled, and is ignored
      });
    }
    call.write({ start: { game_id: seat.gameId, seat: seat.seat } });
  });
}

// Plays a seat to the game's end over the PlayService.Play stream. A stream that drops (UNAVAILABLE,
// DEADLINE_EXCEEDED) is opened again, with backoff, for up to retryFor seconds; the server sends the
// current turn again. Resolves with the GameEnded message, or with null when `stopped` settles first.
async function play(kutnahora, address, credentials, seat, random, retryFor = 0, stopped = null) {
  const client = new kutnahora.PlayService(address, credentials);
  try {
    return await withBackoff((progress) => playStream(client, seat, random, stopped, progress), {
      retryFor,
      again: (error) => TRANSIENT.has(error.code),
      stopped,
      tell: tellRetrying(address, retryFor),
    });
  } finally {
    client.close();
  }
}

let serverAddress = "";

// One Seek in the arena: resolves with the SeekMatched message (game server, game, seat, seat token).
function seek(arena, key, pool, progress = () => {}) {
  const metadata = new grpc.Metadata();
  metadata.add("authorization", `Bearer ${key}`);
  return new Promise((resolve, reject) => {
    const call = arena.Seek({ pool }, metadata);
    let matched = null;
    call.on("data", (message) => {
      progress();
      if (message.event === "matched") matched = message.matched;
    });
    call.on("error", reject);
    call.on("end", () => (matched ? resolve(matched) : reject(new Error("the arena ended the Seek without a match"))));
  });
}

// Codes that end the arena's event stream for good (a revoked key, an arena without StreamEvents); after
// any other the stream is opened again.
const EVENTS_REFUSED = new Set([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.UNIMPLEMENTED]);

// One line saying what a finished (rated) or abandoned event means; null for the others.
function describeEvent(message) {
  if (message.event === "finished") {
    const done = message.finished;
    const before = done.rating_before || {};
    const after = done.rating_after || {};
    const change = (name, a, b, sign) => {
      const show = (x) => (sign && x >= 0 ? "+" : "") + Number(x || 0).toFixed(2);
      return `${name} ${show(a)} → ${show(b)}`;
    };
    return (
      `pool ${done.pool}: ${done.game_id} rated, place ${done.place}: ` +
      `${change("μ", before.mu, after.mu)}, ${change("σ", before.sigma, after.sigma)}, ` +
      `${change("conservative", before.conservative, after.conservative, true)}`
    );
  }
  if (message.event === "abandoned") {
    const lost = message.abandoned;
    return `pool ${lost.pool}: ${lost.game_id} abandoned, not rated: ${lost.message}`;
  }
  return null;
}

// Follows ArenaService.StreamEvents for the bot whose key it carries, printing each rated or abandoned
// game. A dropped stream is opened again with backoff (0.5 s doubling to 5 s); a refusal ends the
// following, and the bot then learns of a lost game through its Play stream only.
//   opened           settles once the arena listens (or refused the stream): no event after is missed
//   abandoned(id)    a promise that the arena's abandoned message for that game resolves
//   forget(id)       stop following a game
//   waitRuled(ids, ms)  waits until every game was rated or abandoned (at most ms milliseconds)
//   stop()           closes the stream
function followEvents(arena, key) {
  const told = new Map(); // game id -> { promise, resolve }
  const ruled = new Set(); // games the arena rated or abandoned
  let ruling = () => {};
  let markOpened;
  const opened = new Promise((resolve) => (markOpened = resolve));
  let call = null;
  let timer = null;
  let stopped = false;
  let working = true;
  let delay = 500;

  const verdict = (gameId) => {
    if (!told.has(gameId)) {
      let resolve;
      const promise = new Promise((r) => (resolve = r));
      told.set(gameId, { promise, resolve });
    }
    return told.get(gameId);
  };

  const open = () => {
    timer = null;
    if (stopped) return;
    const metadata = new grpc.Metadata();
    metadata.add("authorization", `Bearer ${key}`);
    call = arena.StreamEvents({}, metadata);
    call.on("metadata", () => markOpened());
    call.on("data", (message) => {
      delay = 500;
      const line = describeEvent(message);
      if (line) console.log(line);
      if (message.event === "finished" || message.event === "abandoned") {
        ruled.add(message[message.event].game_id);
        ruling();
      }
      if (message.event === "abandoned") verdict(message.abandoned.game_id).resolve(message.abandoned);
    });
    call.on("error", () => {}); // the status below says what happened
    call.on("status", (status) => {
      if (stopped) return;
      if (EVENTS_REFUSED.has(status.code)) {
        console.error(`kutnahora-node-bot: the arena refused its event stream: ${status.details}`);
        working = false;
        markOpened();
        ruling();
        return;
      }
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, 5000);
    });
  };
  open();

  return {
    opened,
    abandoned: (gameId) => verdict(gameId).promise,
    forget: (gameId) => told.delete(gameId),
    async waitRuled(gameIds, ms) {
      const giveUp = Date.now() + ms;
      while (working && !gameIds.every((id) => ruled.has(id)) && Date.now() < giveUp) {
        await Promise.race([new Promise((resolve) => (ruling = resolve)), sleep(giveUp - Date.now())]);
      }
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (call) call.cancel();
    },
  };
}

// Codes of a Seek the bot sends again: the arena restarts, or the connection dropped (a server that stops
// mid-call resets its streams, which grpc-js reports as INTERNAL).
const SEEK_AGAIN = new Set([grpc.status.UNAVAILABLE, grpc.status.CANCELLED, grpc.status.INTERNAL]);

// Seeks until matched. An arena out of reach (it restarts, or the connection dropped) is tried again for up
// to --retry-for seconds; a ticket refused with ALREADY_EXISTS (another process of this bot seeks in the
// pool) is said once and asked for again after a pause, for as long as it takes.
async function seekPatiently(arena, key, args, pool) {
  let toldTaken = false;
  let delay = 500;
  for (;;) {
    try {
      return await withBackoff((progress) => seek(arena, key, pool, progress), {
        retryFor: args.retryFor,
        again: (error) => SEEK_AGAIN.has(error.code),
        first: 500,
        tell: tellRetrying(`the arena at ${args.arena}`, args.retryFor),
      });
    } catch (error) {
      if (error.code !== grpc.status.ALREADY_EXISTS) throw error;
      if (!toldTaken) {
        console.log(
          `pool ${pool}: another process of this bot already seeks in this pool ` +
            `(${refusalReason(error) || "ALREADY_EXISTS"}); this one waits and asks again.`
        );
        toldTaken = true;
      }
      await sleep(delay * (0.5 + Math.random() / 2));
      delay = Math.min(delay * 2, 5000);
    }
  }
}

// Registers the bot's name with the arena and writes its API key to the key file (readable by its owner
// only). It plays no game.
async function registerBot(kutnahora, args, credentials) {
  serverAddress = args.arena;
  const arena = new kutnahora.ArenaService(args.arena, credentials);
  const deadline = new Date(Date.now() + 30000);
  const registered = await new Promise((resolve, reject) =>
    arena.RegisterBot({ name: args.register }, { deadline }, (error, response) => (error ? reject(error) : resolve(response)))
  );
  try {
    fs.writeFileSync(args.keyFile, `${registered.api_key}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    console.error(`kutnahora-node-bot: registered ${registered.name}, but cannot write its key to ${args.keyFile}: ${error.message}`);
    process.exit(1);
  }
  console.log(`registered ${registered.name}; its key is in ${args.keyFile}`);
  process.exit(0);
}

// Rated games in an arena, in every pool of --pool at once: seek in the pool, play the matched seat on the
// game server it names, repeat. Beside it the arena's event stream stays open: when the arena reports the
// game abandoned (its game server lost), the bot ends its Play stream at once and seeks again. Only
// finished games count toward --games (in each pool); each rated result is printed with the rating change.
async function playInArena(kutnahora, args, credentials) {
  serverAddress = args.arena;
  const key = args.keyFile ? fs.readFileSync(args.keyFile, "utf8").trim() : process.env.KUTNAHORA_ARENA_KEY;
  if (!key) usage("no arena API key: give --key-file FILE or set KUTNAHORA_ARENA_KEY");
  const arena = new kutnahora.ArenaService(args.arena, credentials);
  const random = makeRandom(args.seed);
  const events = followEvents(arena, key);
  await Promise.race([events.opened, sleep(5000)]);
  const finished = await Promise.all(
    args.pools.map((pool) => playPool(kutnahora, arena, key, pool, args, credentials, random, events))
  );
  await events.waitRuled(finished.flat(), 10000); // hear the last games' rating changes before leaving
  events.stop();
  process.exit(0);
}

// The rated games of one pool, until --games of them finished; resolves with their game ids.
async function playPool(kutnahora, arena, key, pool, args, credentials, random, events) {
  const finished = [];
  const total = args.games ? `/${args.games}` : "";
  while (args.games === 0 || finished.length < args.games) {
    // The arena restarts, or the connection dropped: seek again, for up to --retry-for seconds.
    const matched = await seekPatiently(arena, key, args, pool);
    const seat = { gameId: matched.game_id, seat: matched.seat, token: matched.seat_token };
    serverAddress = matched.server_address;
    let ended;
    try {
      const told = events.abandoned(seat.gameId);
      ended = await play(kutnahora, matched.server_address, credentials, seat, random, args.retryFor, told);
    } catch (error) {
      if (!TRANSIENT.has(error.code) && error.code !== grpc.status.NOT_FOUND) throw error;
      // The arena rules on the game (not rated) before it matches the bot again in this pool.
      console.log(`pool ${pool}: ${seat.gameId} given up: ${error.details || error.message}. Seeking again.`);
      continue;
    } finally {
      events.forget(seat.gameId);
      serverAddress = args.arena;
    }
    if (ended === null) continue; // the arena abandoned the game (its event was printed): seek again
    const status = ended.status.replace("GAME_STATUS_", "").toLowerCase();
    if (ended.status !== "GAME_STATUS_FINISHED") {
      console.log(`pool ${pool}: ${seat.gameId} ${status} on the game server, not rated. Seeking again.`);
      continue;
    }
    finished.push(seat.gameId);
    const won = ended.result && ended.result.winners.includes(seat.seat);
    console.log(
      `pool ${pool} game ${finished.length}${total}: ${seat.gameId} seat ${seat.seat} vs ` +
        `${matched.seat_names.filter((_, i) => i !== seat.seat).join(", ")}: ${status}${won ? ", won" : ""}`
    );
  }
  return finished;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  serverAddress = args.server;
  const kutnahora = loadServices();
  const credentials = args.tls
    ? grpc.credentials.createSsl(args.caCert ? fs.readFileSync(args.caCert) : null)
    : grpc.credentials.createInsecure();
  if (args.register) return registerBot(kutnahora, args, credentials);
  if (args.arena) return playInArena(kutnahora, args, credentials);
  const games = new kutnahora.GameService(args.server, credentials);
  let seat;
  if (args.token && args.game && args.seat !== null) {
    seat = { gameId: args.game, seat: args.seat, token: args.token };
  } else {
    let gameId = args.game;
    if (args.create) {
      const created = await retrying(games, "CreateGame", { options: { players: args.players } }, args.retryFor);
      gameId = created.game.game_id;
      console.log(`created game ${gameId} for ${args.players} players`);
    }
    const request = { game_id: gameId, name: args.name };
    if (args.seat !== null) request.seat = args.seat;
    let joined;
    try {
      joined = await retrying(games, "JoinGame", request, args.retryFor);
    } catch (error) {
      // The seat asked for went to someone else: any free seat will do.
      if (args.seat === null || refusalReason(error) !== "SEAT_TAKEN") throw error;
      console.log(`seat ${args.seat} is taken (SEAT_TAKEN); joining a free seat instead`);
      delete request.seat;
      joined = await retrying(games, "JoinGame", request, args.retryFor);
    }
    seat = { gameId, seat: joined.seat, token: joined.seat_token };
    console.log(`joined game ${gameId} as seat ${seat.seat}`);
  }
  const ended = await play(kutnahora, args.server, credentials, seat, makeRandom(args.seed), args.retryFor);
  const result = ended.result || { seats: [], winners: [] };
  const mine = result.seats.find((s) => s.seat === seat.seat);
  const won = result.winners.includes(seat.seat);
  console.log(
    `game ${seat.gameId} ${ended.status.replace("GAME_STATUS_", "").toLowerCase()}: ` +
      `seat ${seat.seat} scored ${mine ? mine.score : "?"}${won ? " and won" : ""}`
  );
  process.exit(ended.status === "GAME_STATUS_FINISHED" ? 0 : 1);
}

main().catch((error) => {
  const reason = refusalReason(error);
  const detail = (error.details || error.message || String(error)) + (reason ? ` (${reason})` : "");
  if (error.code === grpc.status.UNAVAILABLE) {
    console.error(`kutnahora-node-bot: cannot connect to the Kutná Hora server at ${serverAddress}.`);
    process.exit(2);
  }
  console.error(`kutnahora-node-bot: ${detail}`);
  process.exit(1);
});
