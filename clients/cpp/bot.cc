// A Kutná Hora starter bot in C++: joins a seat, plays the first legal option of every decision over the
// Play stream, and prints the server's ErrorInfo reason when a call is refused. Put your rule in choose().
//
// The seat comes from the tournament runner's environment (KUTNAHORA_SERVER, KUTNAHORA_GAME_ID,
// KUTNAHORA_SEAT, KUTNAHORA_TOKEN), or from flags: --create makes a game and joins it, --game ID joins a
// free seat of a waiting game; --server HOST:PORT (or unix:/path) says where.
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

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

[[noreturn]] void fail(const std::string& what, const grpc::Status& status) {
  std::string why = reason(status);
  std::cerr << "kutnahora-cpp-bot: " << what << ": " << status.error_message()
            << (why.empty() ? "" : " (" + why + ")") << std::endl;
  std::exit(1);
}

std::string env(const char* name, const std::string& fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server = env("KUTNAHORA_SERVER", "localhost:50051");
  std::string game_id = env("KUTNAHORA_GAME_ID");
  std::string token = env("KUTNAHORA_TOKEN");
  std::string seat_text = env("KUTNAHORA_SEAT");
  bool create = false;
  int players = 2;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "kutnahora-cpp-bot: " << flag << " needs a value" << std::endl;
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--server") server = value();
    else if (flag == "--game") { game_id = value(); token.clear(); }
    else if (flag == "--create") { create = true; token.clear(); }
    else if (flag == "--players") players = std::stoi(value());
    else {
      std::cerr << "usage: kutnahora-bot [--server ADDRESS] (--create [--players N] | --game ID)" << std::endl;
      return 2;
    }
  }

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
      if (!status.ok()) fail("cannot create a game", status);
      game_id = created.game().game_id();
      std::cout << "created game " << game_id << " for " << players << " players" << std::endl;
    }
    if (game_id.empty()) {
      std::cerr << "kutnahora-cpp-bot: say which game: --create, --game ID, or KUTNAHORA_GAME_ID" << std::endl;
      return 2;
    }
    grpc::ClientContext context;
    v1::JoinGameRequest request;
    request.set_game_id(game_id);
    request.set_name("cpp-first-option");
    v1::JoinGameResponse joined;
    grpc::Status status = games->JoinGame(&context, request, &joined);
    if (!status.ok()) fail("cannot join game " + game_id, status);
    seat = joined.seat();
    token = joined.seat_token();
    std::cout << "joined game " << game_id << " as seat " << seat << std::endl;
  }

  auto play = v1::PlayService::NewStub(channel);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + token);
  auto stream = play->Play(&context);
  v1::PlayRequest start;
  start.mutable_start()->set_game_id(game_id);
  start.mutable_start()->set_seat(seat);
  stream->Write(start);
  long long answered = -1;
  v1::PlayResponse message;
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
      const v1::GameEnded& ended = message.game_ended();
      for (const auto& result : ended.result().seats()) {
        if (result.seat() == seat) {
          std::cout << "game " << game_id << " " << v1::GameStatus_Name(ended.status()) << ": seat " << seat
                    << " scored " << result.score() << (result.winner() ? " and won" : "") << std::endl;
        }
      }
      stream->WritesDone();
      stream->Finish();
      return ended.status() == v1::GAME_STATUS_FINISHED ? 0 : 1;
    }
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  fail("the Play stream of game " + game_id + " ended early", status);
}
