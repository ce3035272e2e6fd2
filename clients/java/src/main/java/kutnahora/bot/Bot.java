// A Kutná Hora starter bot in Java: joins a seat, plays the first legal option of every decision over the
// Play stream, and prints the server's ErrorInfo reason when a call is refused. Put your rule in choose().
//
// The seat comes from the tournament runner's environment (KUTNAHORA_SERVER, KUTNAHORA_GAME_ID,
// KUTNAHORA_SEAT, KUTNAHORA_TOKEN), or from flags: --create makes a game and joins it, --game ID joins a
// free seat of a waiting game; --server HOST:PORT (or unix:/path) says where.
package kutnahora.bot;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import kutnahora.bot.rpc.ErrorInfo;
import kutnahora.v1.Game.Answer;
import kutnahora.v1.Game.GameOptions;
import kutnahora.v1.Game.GameStatus;
import kutnahora.v1.Game.LegalOption;
import kutnahora.v1.Game.Observation;
import kutnahora.v1.Game.RejectReason;
import kutnahora.v1.Game.SeatResult;
import kutnahora.v1.GameServiceGrpc;
import kutnahora.v1.GameServiceOuterClass.CreateGameRequest;
import kutnahora.v1.GameServiceOuterClass.CreateGameResponse;
import kutnahora.v1.GameServiceOuterClass.JoinGameRequest;
import kutnahora.v1.GameServiceOuterClass.JoinGameResponse;
import kutnahora.v1.PlayServiceGrpc;
import kutnahora.v1.PlayServiceOuterClass.DecisionRejected;
import kutnahora.v1.PlayServiceOuterClass.GameEnded;
import kutnahora.v1.PlayServiceOuterClass.PlayDecision;
import kutnahora.v1.PlayServiceOuterClass.PlayRequest;
import kutnahora.v1.PlayServiceOuterClass.PlayResponse;
import kutnahora.v1.PlayServiceOuterClass.PlayStart;

public final class Bot {
  private static final Metadata.Key<byte[]> STATUS_DETAILS =
      Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Object END = new Object();

  private Bot() {}

  /** The option to play: here the first legal one. */
  static LegalOption choose(Observation observation) {
    return observation.getPending().getOptions(0);
  }

  /** The ErrorInfo reason of a refused call (such as SEAT_TAKEN or NOT_FOUND), or "". */
  static String reason(Throwable error) {
    Metadata trailers = Status.trailersFromThrowable(error);
    byte[] raw = trailers == null ? null : trailers.get(STATUS_DETAILS);
    if (raw == null) {
      return "";
    }
    try {
      for (Any any : kutnahora.bot.rpc.Status.parseFrom(raw).getDetailsList()) {
        if (any.getTypeUrl().endsWith("/google.rpc.ErrorInfo")) {
          ErrorInfo info = ErrorInfo.parseFrom(any.getValue());
          if ("kutnahora.v1".equals(info.getDomain())) {
            return info.getReason();
          }
        }
      }
    } catch (InvalidProtocolBufferException ignored) {
      // a trailer that does not decode carries no reason
    }
    return "";
  }

  static int fail(String what, Throwable error) {
    String why = reason(error);
    String message = Status.fromThrowable(error).getDescription();
    System.err.println(
        "kutnahora-java-bot: " + what + ": " + (message == null ? error : message)
            + (why.isEmpty() ? "" : " (" + why + ")"));
    return 1;
  }

  static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  public static void main(String[] args) throws Exception {
    // Netty derives channel ids from a hardware address, and warns when it finds none (as in the
    // tournament runner's sandbox, which has no network interface but loopback): give it one.
    for (String netty : new String[] {"io.netty", "io.grpc.netty.shaded.io.netty"}) {
      if (System.getProperty(netty + ".machineId") == null) {
        System.setProperty(netty + ".machineId", "02:00:00:00:00:00:00:01");
      }
    }
    System.exit(run(args));
  }

  static int run(String[] args) throws Exception {
    String server = env("KUTNAHORA_SERVER", "localhost:50051");
    String gameId = env("KUTNAHORA_GAME_ID", "");
    String token = env("KUTNAHORA_TOKEN", "");
    String seatText = env("KUTNAHORA_SEAT", "");
    boolean create = false;
    int players = 2;
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      boolean hasValue = i + 1 < args.length;
      if (flag.equals("--server") && hasValue) {
        server = args[++i];
      } else if (flag.equals("--game") && hasValue) {
        gameId = args[++i];
        token = "";
      } else if (flag.equals("--create")) {
        create = true;
        token = "";
      } else if (flag.equals("--players") && hasValue) {
        players = Integer.parseInt(args[++i]);
      } else {
        System.err.println(
            "usage: kutnahora-bot [--server ADDRESS] (--create [--players N] | --game ID)");
        return 2;
      }
    }

    ManagedChannel channel;
    try {
      channel = ManagedChannelBuilder.forTarget(target(server)).usePlaintext().build();
    } catch (IOException error) {
      System.err.println("kutnahora-java-bot: cannot reach " + server + ": " + error.getMessage());
      return 1;
    }
    try {
      GameServiceGrpc.GameServiceBlockingStub games = GameServiceGrpc.newBlockingStub(channel);
      int seat = 0;
      if (!token.isEmpty() && !seatText.isEmpty() && !gameId.isEmpty()) {
        seat = Integer.parseInt(seatText);
      } else {
        if (create) {
          CreateGameRequest request =
              CreateGameRequest.newBuilder()
                  .setOptions(GameOptions.newBuilder().setPlayers(players))
                  .build();
          try {
            CreateGameResponse created = games.createGame(request);
            gameId = created.getGame().getGameId();
          } catch (StatusRuntimeException error) {
            return fail("cannot create a game", error);
          }
          System.out.println("created game " + gameId + " for " + players + " players");
        }
        if (gameId.isEmpty()) {
          System.err.println(
              "kutnahora-java-bot: say which game: --create, --game ID, or KUTNAHORA_GAME_ID");
          return 2;
        }
        JoinGameRequest request =
            JoinGameRequest.newBuilder().setGameId(gameId).setName("java-first-option").build();
        try {
          JoinGameResponse joined = games.joinGame(request);
          seat = joined.getSeat();
          token = joined.getSeatToken();
        } catch (StatusRuntimeException error) {
          return fail("cannot join game " + gameId, error);
        }
        System.out.println("joined game " + gameId + " as seat " + seat);
      }
      return play(channel, gameId, seat, token);
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** A gRPC target for the address; a unix: address goes through a loopback bridge. */
  static String target(String server) throws IOException {
    if (!server.startsWith("unix:")) {
      return server;
    }
    String path = server.substring("unix:".length());
    if (path.startsWith("//")) {
      path = path.substring(2); // unix:///absolute/path
    }
    return UnixSocketBridge.open(path);
  }

  /** Answers every YourTurn on the seat's Play stream until the game ends. */
  static int play(ManagedChannel channel, String gameId, int seat, String token)
      throws InterruptedException {
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer " + token);
    PlayServiceGrpc.PlayServiceStub stub =
        PlayServiceGrpc.newStub(channel)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    StreamObserver<PlayRequest> stream =
        stub.play(
            new StreamObserver<PlayResponse>() {
              @Override
              public void onNext(PlayResponse message) {
                inbox.add(message);
              }

              @Override
              public void onError(Throwable error) {
                inbox.add(error);
              }

              @Override
              public void onCompleted() {
                inbox.add(END);
              }
            });
    stream.onNext(
        PlayRequest.newBuilder()
            .setStart(PlayStart.newBuilder().setGameId(gameId).setSeat(seat))
            .build());
    long answered = -1;
    while (true) {
      Object next = inbox.take();
      if (next instanceof Throwable) {
        return fail("the Play stream of game " + gameId + " failed", (Throwable) next);
      }
      if (next == END) {
        System.err.println(
            "kutnahora-java-bot: the server closed the Play stream of game " + gameId + " early");
        return 1;
      }
      PlayResponse message = (PlayResponse) next;
      switch (message.getMessageCase()) {
        case YOUR_TURN:
          Observation observation = message.getYourTurn().getObservation();
          if (observation.getVersion() <= answered) {
            break; // already answered this version
          }
          answered = observation.getVersion();
          PlayDecision decision =
              PlayDecision.newBuilder()
                  .setVersion(observation.getVersion())
                  .setAnswer(Answer.newBuilder().setOptionIndex(choose(observation).getIndex()))
                  .build();
          stream.onNext(PlayRequest.newBuilder().setDecision(decision).build());
          break;
        case REJECTED:
          DecisionRejected rejected = message.getRejected();
          System.err.println(
              "decision refused (" + rejected.getReason() + "): " + rejected.getMessage());
          if (rejected.getReason() == RejectReason.REJECT_REASON_STALE_VERSION) {
            answered = -1;
          }
          break;
        case GAME_ENDED:
          GameEnded ended = message.getGameEnded();
          for (SeatResult result : ended.getResult().getSeatsList()) {
            if (result.getSeat() == seat) {
              System.out.println(
                  "game " + gameId + " " + ended.getStatus() + ": seat " + seat + " scored "
                      + result.getScore() + (result.getWinner() ? " and won" : ""));
            }
          }
          stream.onCompleted();
          return ended.getStatus() == GameStatus.GAME_STATUS_FINISHED ? 0 : 1;
        default:
          break;
      }
    }
  }
}
