// A Kutná Hora starter bot in C++: joins a seat, plays the first legal option of every decision over the
// Play stream, and prints the server's ErrorInfo reason when a call is refused. Put your rule in choose().
//
// The seat comes from the tournament runner's environment (KUTNAHORA_SERVER, KUTNAHORA_GAME_ID,
// KUTNAHORA_SEAT, KUTNAHORA_TOKEN), or from flags: --create makes a game and joins it, --game ID joins a
// free seat of a waiting game; --server HOST:PORT (or unix:/path) says where. In an arena,
// --arena ADDRESS --register NAME --key-file FILE registers the bot (and plays no game; a key file that
// exists is never overwritten), and --arena ADDRESS --key-file FILE --pool P --games N plays rated games:
// it seeks a game in each pool of P (comma-separated, such as 2,4, played at once), plays the matched seat
// on the game server the arena names and seeks again, keeping the arena's event stream
// open beside it (a game the arena reports abandoned is left at once; each rated result is printed with
// the rating change; only rated games count toward --games, in each pool).
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <vector>

#include "kutnahora/v1/arena_service.grpc.pb.h"
#include "kutnahora/v1/game_service.grpc.pb.h"
#include "kutnahora/v1/play_service.grpc.pb.h"
#include "rpc_status.pb.h"

namespace v1 = kutnahora::v1;

namespace {

// The option to play: here the first legal one.
const v1::LegalOption& choose(const v1::Observation& observation) {
  return observation.pending().options(0);
}

// The ErrorInfo reason of a refused call (such as SEAT_TAKEN or NOT_FOUND), or "".
std::string reason(const grpc::Status& status) {
  kutnahora_rpc::Status details;
  if (status.error_details().empty() || !details.ParseFromString(status.error_details())) return "";
  for (const auto& any : details.details()) {
    const std::string& url = any.type_url();
    const std::string suffix = "/google.rpc.ErrorInfo";
    if (url.size() < suffix.size() || url.compare(url.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    kutnahora_rpc::ErrorInfo info;
    if (info.ParseFromString(any.value()) && info.domain() == "kutnahora.v1") return info.reason();
  }
  return "";
}

std::string describe(const grpc::Status& status) {
  std::string why = reason(status);
  return status.error_message() + (why.empty() ? "" : " (" + why + ")");
}

[[noreturn]] void fail(const std::string& what, const grpc::Status& status) {
  std::cerr << "kutnahora-cpp-bot: " << what << ": " << describe(status) << std::endl;
  std::exit(1);
}

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "kutnahora-cpp-bot: " << what << std::endl;
  std::exit(1);
}

std::string env(const char* name, const std::string& fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

const char* const kUsage =
    "usage: kutnahora-cpp-bot [--server ADDRESS] (--create [--players N] | --game ID)\n"
    "       kutnahora-cpp-bot --arena ADDRESS --register NAME --key-file FILE\n"
    "       kutnahora-cpp-bot --arena ADDRESS [--key-file FILE] [--pool POOLS] [--games N] [--retry-for SECONDS]\n"
    "  --server     the game server (default $KUTNAHORA_SERVER, else localhost:50051)\n"
    "  --create     create a game of --players players (default 2) and join its seat 0\n"
    "  --game       join a free seat of this waiting game\n"
    "  --arena      an arena's address: play rated games there (or register with --register)\n"
    "  --register   register NAME with the arena, write its API key to --key-file (a new file: one that\n"
    "               exists is never overwritten), and exit\n"
    "  --key-file   the file holding the bot's arena API key (default $KUTNAHORA_ARENA_KEY)\n"
    "  --pool       the arena pools to seek games in, comma-separated, such as 2 or 2,4 (played at once;\n"
    "               default 2)\n"
    "  --games      rated games to play in each pool (default 1; 0 plays until stopped)\n"
    "  --retry-for  seconds to retry an arena or game server out of reach (default 30)\n";

// The outcome of playing a seat: the GameEnded message, or the status the Play stream failed with.
struct Played {
  bool ended = false;
  v1::GameEnded game_ended;
  grpc::Status status;
};

// Answers every YourTurn on the seat's Play stream until the game ends (or the context is cancelled).
Played play_seat(v1::PlayService::Stub& play, grpc::ClientContext& context, const std::string& game_id, int seat,
                 const std::string& token) {
  context.AddMetadata("authorization", "Bearer " + token);
  auto stream = play.Play(&context);
  v1::PlayRequest start;
  start.mutable_start()->set_game_id(game_id);
  start.mutable_start()->set_seat(seat);
  stream->Write(start);
  long long answered = -1;
  v1::PlayResponse message;
  Played played;
  while (stream->Read(&message)) {
    if (message.has_your_turn()) {
      const v1::Observation& observation = message.your_turn().observation();
      if (observation.version() <= answered) continue;  // already answered this version
      answered = observation.version();
      v1::PlayRequest decision;
      decision.mutable_decision()->set_version(observation.version());
      decision.mutable_decision()->mutable_answer()->set_option_index(choose(observation).index());
      stream->Write(decision);
    } else if (message.has_rejected()) {
      std::cerr << "decision refused (" << v1::RejectReason_Name(message.rejected().reason())
                << "): " << message.rejected().message() << std::endl;
      if (message.rejected().reason() == v1::REJECT_REASON_STALE_VERSION) answered = -1;
    } else if (message.has_game_ended()) {
      played.ended = true;
      played.game_ended = message.game_ended();
      stream->WritesDone();
      stream->Finish();
      return played;
    }
  }
  stream->WritesDone();
  played.status = stream->Finish();
  if (played.status.ok()) {
    played.status = grpc::Status(grpc::StatusCode::UNKNOWN, "the server closed the stream before the game ended");
  }
  return played;
}

std::string lower_status(v1::GameStatus status) {
  std::string name = v1::GameStatus_Name(status).substr(std::string("GAME_STATUS_").size());
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

// Waits before the next retry: half to all of delay (milliseconds), which then doubles up to 5 s.
void backoff(int& delay) {
  static std::mt19937 random(std::random_device{}());
  std::this_thread::sleep_for(std::chrono::milliseconds(delay / 2 + random() % (delay / 2 + 1)));
  delay = std::min(delay * 2, 5000);
}

bool transient(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE || status.error_code() == grpc::StatusCode::CANCELLED ||
         status.error_code() == grpc::StatusCode::INTERNAL;
}

// One line on standard output, whole (the pools' threads and the event stream's print side by side).
void say(const std::string& line) {
  static std::mutex printing;
  std::lock_guard<std::mutex> lock(printing);
  std::cout << line << std::endl;
}

// The pools of --pool: separated by commas (such as 2 or 2,4), each named once.
std::vector<std::string> parse_pools(const std::string& text) {
  std::vector<std::string> pools;
  std::stringstream parts(text);
  std::string pool;
  while (std::getline(parts, pool, ',')) {
    pool.erase(0, pool.find_first_not_of(" \t"));
    pool.erase(pool.find_last_not_of(" \t") + 1);
    if (!pool.empty() && std::find(pools.begin(), pools.end(), pool) == pools.end()) pools.push_back(pool);
  }
  return pools;
}

// Registers the bot's name with the arena and writes its API key to key_file (readable by its owner only).
// The arena shows a key once, so a key file that exists (it may hold an earlier key) is never overwritten:
// the bot refuses before it registers.
int register_bot(const std::string& arena_address, const std::string& name, const std::string& key_file) {
  if (key_file.empty()) fail("--register needs --key-file, the file the new key is written to");
  struct stat existing;
  if (::lstat(key_file.c_str(), &existing) == 0) {
    std::cerr << "kutnahora-cpp-bot: " << key_file << " exists (it may hold a key); name a new file, or delete it first"
              << std::endl;
    return 2;
  }
  auto arena = v1::ArenaService::NewStub(grpc::CreateChannel(arena_address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::RegisterBotRequest request;
  request.set_name(name);
  v1::RegisterBotResponse registered;
  grpc::Status status = arena->RegisterBot(&context, request, &registered);
  if (!status.ok()) fail("cannot register " + name + " at the arena " + arena_address, status);
  int descriptor = ::open(key_file.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  std::string line = registered.api_key() + "\n";
  if (descriptor < 0 || ::write(descriptor, line.data(), line.size()) != static_cast<ssize_t>(line.size()) ||
      ::close(descriptor) != 0) {
    fail("registered " + name + ", but cannot write its key to " + key_file);
  }
  say("registered " + registered.name() + "; its key is in " + key_file);
  return 0;
}

// Follows the bot's ArenaService.StreamEvents stream on a thread of its own: prints each rated or abandoned
// game, cancels the Play stream of a game the arena abandons, and opens the stream again after a drop.
class Events {
 public:
  Events(std::shared_ptr<grpc::Channel> channel, std::string key)
      : arena_(v1::ArenaService::NewStub(channel)), key_(std::move(key)), thread_([this] { run(); }) {}

  ~Events() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      if (stream_) stream_->TryCancel();
    }
    cv_.notify_all();
    thread_.join();
  }

  // Waits until the arena listens for the bot's events (no event after that is missed), at most `limit`.
  void wait_opened(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, limit, [this] { return opened_; });
  }

  // The context of a game being played: cancelled when the arena abandons the game (at once if it has).
  void watch(const std::string& game_id, std::shared_ptr<grpc::ClientContext> context) {
    std::lock_guard<std::mutex> lock(mu_);
    if (abandoned_.count(game_id) != 0) context->TryCancel();
    playing_[game_id] = std::move(context);
  }

  // Stops watching the game; true if the arena abandoned it.
  bool forget(const std::string& game_id) {
    std::lock_guard<std::mutex> lock(mu_);
    playing_.erase(game_id);
    return abandoned_.count(game_id) != 0;
  }

  // Waits (at most `limit`) until the arena rated or abandoned every game.
  void wait_ruled(const std::vector<std::string>& games, std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, limit, [&] {
      return !working_ || std::all_of(games.begin(), games.end(), [&](const std::string& id) { return ruled_.count(id) != 0; });
    });
  }

 private:
  void run() {
    int delay = 500;
    for (;;) {
      auto context = std::make_shared<grpc::ClientContext>();
      context->AddMetadata("authorization", "Bearer " + key_);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;
        stream_ = context;
      }
      auto reader = arena_->StreamEvents(context.get(), v1::StreamEventsRequest());
      reader->WaitForInitialMetadata();
      mark_opened();
      v1::StreamEventsResponse message;
      while (reader->Read(&message)) {
        delay = 500;
        handle(message);
      }
      grpc::Status status = reader->Finish();
      std::unique_lock<std::mutex> lock(mu_);
      if (stopping_) return;
      auto code = status.error_code();
      if (code == grpc::StatusCode::UNAUTHENTICATED || code == grpc::StatusCode::PERMISSION_DENIED ||
          code == grpc::StatusCode::UNIMPLEMENTED) {
        std::cerr << "kutnahora-cpp-bot: the arena refused its event stream: " << describe(status) << std::endl;
        working_ = false;
        cv_.notify_all();
        return;
      }
      cv_.wait_for(lock, std::chrono::milliseconds(delay), [this] { return stopping_; });  // then open it again
      delay = std::min(delay * 2, 5000);
    }
  }

  void mark_opened() {
    std::lock_guard<std::mutex> lock(mu_);
    opened_ = true;
    cv_.notify_all();
  }

  void handle(const v1::StreamEventsResponse& message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (message.has_finished()) {
      const v1::BotGameFinished& done = message.finished();
      const v1::PoolRating& before = done.rating_before();
      const v1::PoolRating& after = done.rating_after();
      char line[400];
      std::snprintf(line, sizeof line,
                    "pool %s: %s rated, place %d: μ %.2f → %.2f, σ %.2f → %.2f, conservative %+.2f → %+.2f",
                    done.pool().c_str(), done.game_id().c_str(), done.place(), before.mu(), after.mu(),
                    before.sigma(), after.sigma(), before.conservative(), after.conservative());
      say(line);
      ruled_.insert(done.game_id());
    } else if (message.has_abandoned()) {
      const v1::BotGameAbandoned& lost = message.abandoned();
      say("pool " + lost.pool() + ": " + lost.game_id() + " abandoned, not rated: " + lost.message());
      ruled_.insert(lost.game_id());
      abandoned_.insert(lost.game_id());
      auto playing = playing_.find(lost.game_id());
      if (playing != playing_.end()) playing->second->TryCancel();  // leave the game at once
    }
    cv_.notify_all();
  }

  std::unique_ptr<v1::ArenaService::Stub> arena_;
  std::string key_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool opened_ = false;
  bool working_ = true;
  bool stopping_ = false;
  std::set<std::string> ruled_;
  std::set<std::string> abandoned_;
  std::map<std::string, std::shared_ptr<grpc::ClientContext>> playing_;
  std::shared_ptr<grpc::ClientContext> stream_;
  std::thread thread_;
};

// One Seek: holds a ticket in the pool until the arena matches it.
grpc::Status seek_once(v1::ArenaService::Stub& arena, const std::string& key, const std::string& pool,
                       v1::SeekMatched* matched) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + key);
  v1::SeekRequest request;
  request.set_pool(pool);
  auto reader = arena.Seek(&context, request);
  v1::SeekResponse message;
  bool found = false;
  while (reader->Read(&message)) {
    if (message.has_matched()) {
      *matched = message.matched();
      found = true;
    }
  }
  grpc::Status status = reader->Finish();
  if (status.ok() && !found) return grpc::Status(grpc::StatusCode::UNKNOWN, "the arena ended the Seek without a match");
  return status;
}

struct ArenaOptions {
  std::string address;
  std::string key_file;
  std::vector<std::string> pools = {"2"};
  int games = 1;
  int retry_for = 30;
};

// Seeks until matched. A ticket refused with ALREADY_EXISTS (another process of this bot seeks in the pool)
// is asked for again after a pause; an arena out of reach is tried again for up to --retry-for seconds.
v1::SeekMatched seek(v1::ArenaService::Stub& arena, const std::string& key, const ArenaOptions& options,
                     const std::string& pool) {
  int delay = 500;
  bool told_taken = false;
  bool told_away = false;
  auto failing_since = std::chrono::steady_clock::time_point();
  for (;;) {
    v1::SeekMatched matched;
    grpc::Status status = seek_once(arena, key, pool, &matched);
    if (status.ok()) return matched;
    if (status.error_code() == grpc::StatusCode::ALREADY_EXISTS) {
      if (!told_taken) {
        say("pool " + pool + ": another process of this bot already seeks in this pool (" + reason(status) +
            "); this one waits and asks again.");
        told_taken = true;
      }
      failing_since = std::chrono::steady_clock::time_point();
    } else if (transient(status)) {
      auto now = std::chrono::steady_clock::now();
      if (failing_since == std::chrono::steady_clock::time_point()) failing_since = now;
      if (now - failing_since + std::chrono::milliseconds(delay) > std::chrono::seconds(options.retry_for)) {
        fail("cannot seek a game in pool " + pool + " at the arena " + options.address, status);
      }
      if (!told_away) {
        std::cerr << "kutnahora-cpp-bot: cannot reach the arena at " << options.address << " ("
                  << status.error_message() << "); retrying for up to " << options.retry_for << " s" << std::endl;
        told_away = true;
      }
    } else {
      fail("cannot seek a game in pool " + pool + " at the arena " + options.address, status);
    }
    backoff(delay);
  }
}

// The game servers the arena named, one channel each, shared by the pools' threads.
class Servers {
 public:
  std::shared_ptr<grpc::Channel> get(const std::string& address) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& channel = channels_[address];
    if (!channel) channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    return channel;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;
};

// One pool's rated games: seek, play the matched seat, seek again, until options.games of them finished
// (0: on); returns their game ids.
std::vector<std::string> play_pool(v1::ArenaService::Stub& arena, const std::string& key, const std::string& pool,
                                   const ArenaOptions& options, Events& events, Servers& servers) {
  std::vector<std::string> finished;
  std::string total = options.games > 0 ? "/" + std::to_string(options.games) : "";
  while (options.games == 0 || static_cast<int>(finished.size()) < options.games) {
    v1::SeekMatched matched = seek(arena, key, options, pool);
    auto play = v1::PlayService::NewStub(servers.get(matched.server_address()));
    const std::string& game_id = matched.game_id();
    Played played;
    int delay = 200;
    auto started = std::chrono::steady_clock::now();
    for (;;) {  // a dropped Play stream is opened again (the server sends the current turn again)
      auto context = std::make_shared<grpc::ClientContext>();
      events.watch(game_id, context);
      played = play_seat(*play, *context, game_id, matched.seat(), matched.seat_token());
      if (played.ended || played.status.error_code() != grpc::StatusCode::UNAVAILABLE ||
          std::chrono::steady_clock::now() - started + std::chrono::milliseconds(delay) >
              std::chrono::seconds(options.retry_for)) {
        break;
      }
      backoff(delay);
    }
    if (events.forget(game_id)) continue;  // the arena abandoned the game (its event was printed): seek again
    if (!played.ended) {
      say("pool " + pool + ": " + game_id + " given up: " + describe(played.status) + ". Seeking again.");
      continue;
    }
    const v1::GameEnded& ended = played.game_ended;
    if (ended.status() != v1::GAME_STATUS_FINISHED) {
      say("pool " + pool + ": " + game_id + " " + lower_status(ended.status()) +
          " on the game server, not rated. Seeking again.");
      continue;
    }
    finished.push_back(game_id);
    std::string others;
    for (int i = 0; i < matched.seat_names_size(); ++i) {
      if (i != matched.seat()) others += (others.empty() ? "" : ", ") + matched.seat_names(i);
    }
    bool won = std::find(ended.result().winners().begin(), ended.result().winners().end(), matched.seat()) !=
               ended.result().winners().end();
    say("pool " + pool + " game " + std::to_string(finished.size()) + total + ": " + game_id + " seat " +
        std::to_string(matched.seat()) + " vs " + others + ": finished" + (won ? ", won" : ""));
  }
  return finished;
}

// Rated games in every pool at once, each on a thread of its own, until options.games of each finished.
int play_arena(const ArenaOptions& options) {
  std::string key;
  if (options.key_file.empty()) {
    key = env("KUTNAHORA_ARENA_KEY");
  } else {
    std::ifstream file(options.key_file);
    if (!file) fail("cannot read the key file " + options.key_file);
    std::getline(file, key);
  }
  key.erase(key.find_last_not_of(" \t\r\n") + 1);
  if (key.empty()) fail("no arena API key: give --key-file FILE (from --register NAME) or set KUTNAHORA_ARENA_KEY");
  auto channel = grpc::CreateChannel(options.address, grpc::InsecureChannelCredentials());
  auto arena = v1::ArenaService::NewStub(channel);
  Events events(channel, key);
  events.wait_opened(std::chrono::seconds(5));
  Servers servers;
  std::vector<std::vector<std::string>> finished(options.pools.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < options.pools.size(); ++i) {
    threads.emplace_back([&, i] { finished[i] = play_pool(*arena, key, options.pools[i], options, events, servers); });
  }
  for (auto& thread : threads) thread.join();
  std::vector<std::string> all;
  for (const auto& games : finished) all.insert(all.end(), games.begin(), games.end());
  events.wait_ruled(all, std::chrono::seconds(10));  // hear the last rating changes
  return 0;
}

int number(const std::string& flag, const std::string& text) {
  try {
    size_t used = 0;
    int value = std::stoi(text, &used);
    if (used == text.size() && value >= 0) return value;
  } catch (const std::exception&) {
  }
  std::cerr << "kutnahora-cpp-bot: " << flag << " takes a number of 0 or more, not '" << text << "'\n" << kUsage;
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string server = env("KUTNAHORA_SERVER", "localhost:50051");
  std::string game_id = env("KUTNAHORA_GAME_ID");
  std::string token = env("KUTNAHORA_TOKEN");
  std::string seat_text = env("KUTNAHORA_SEAT");
  bool create = false;
  int players = 2;
  std::string register_name;
  ArenaOptions arena;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "kutnahora-cpp-bot: " << flag << " needs a value\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--server") server = value();
    else if (flag == "--game") { game_id = value(); token.clear(); }
    else if (flag == "--create") { create = true; token.clear(); }
    else if (flag == "--players") players = number(flag, value());
    else if (flag == "--arena") arena.address = value();
    else if (flag == "--register") register_name = value();
    else if (flag == "--key-file") arena.key_file = value();
    else if (flag == "--pool") arena.pools = parse_pools(value());
    else if (flag == "--games") arena.games = number(flag, value());
    else if (flag == "--retry-for") arena.retry_for = number(flag, value());
    else if (flag == "--help" || flag == "-h") {
      std::cout << "A Kutná Hora starter bot: plays the first legal option of every decision.\n" << kUsage;
      return 0;
    } else {
      std::cerr << "kutnahora-cpp-bot: unknown argument " << flag << "\n" << kUsage;
      return 2;
    }
  }
  if (arena.pools.empty()) {
    std::cerr << "kutnahora-cpp-bot: --pool needs at least one pool, such as 2 or 2,4\n" << kUsage;
    return 2;
  }
  if (!register_name.empty() && arena.address.empty()) {
    std::cerr << "kutnahora-cpp-bot: --register needs --arena, the arena's address\n" << kUsage;
    return 2;
  }
  if (!register_name.empty()) return register_bot(arena.address, register_name, arena.key_file);
  if (!arena.address.empty()) return play_arena(arena);

  auto channel = grpc::CreateChannel(server, grpc::InsecureChannelCredentials());
  auto games = v1::GameService::NewStub(channel);
  int seat = 0;
  if (!token.empty() && !seat_text.empty() && !game_id.empty()) {
    seat = std::stoi(seat_text);
  } else {
    if (create) {
      grpc::ClientContext context;
      v1::CreateGameRequest request;
      request.mutable_options()->set_players(players);
      v1::CreateGameResponse created;
      grpc::Status status = games->CreateGame(&context, request, &created);
      if (!status.ok()) fail("cannot create a game at " + server, status);
      game_id = created.game().game_id();
      std::cout << "created game " << game_id << " for " << players << " players" << std::endl;
    }
    if (game_id.empty()) {
      std::cerr << "kutnahora-cpp-bot: say which game: --create, --game ID, or KUTNAHORA_GAME_ID\n" << kUsage;
      return 2;
    }
    grpc::ClientContext context;
    v1::JoinGameRequest request;
    request.set_game_id(game_id);
    request.set_name("cpp-first-option");
    v1::JoinGameResponse joined;
    grpc::Status status = games->JoinGame(&context, request, &joined);
    if (!status.ok()) fail("cannot join game " + game_id + " at " + server, status);
    seat = joined.seat();
    token = joined.seat_token();
    std::cout << "joined game " << game_id << " as seat " << seat << std::endl;
  }

  auto play = v1::PlayService::NewStub(channel);
  grpc::ClientContext context;
  Played played = play_seat(*play, context, game_id, seat, token);
  if (!played.ended) fail("the Play stream of game " + game_id + " ended early", played.status);
  const v1::GameEnded& ended = played.game_ended;
  for (const auto& result : ended.result().seats()) {
    if (result.seat() == seat) {
      std::cout << "game " << game_id << " " << v1::GameStatus_Name(ended.status()) << ": seat " << seat
                << " scored " << result.score() << (result.winner() ? " and won" : "") << std::endl;
    }
  }
  return ended.status() == v1::GAME_STATUS_FINISHED ? 0 : 1;
}
