// A Kutná Hora starter bot in Java: joins a seat, plays the first legal option of every decision over the
// Play stream, and prints the server's ErrorInfo reason when a call is refused. Put your rule in choose().
//
// The seat comes from the tournament runner's environment (KUTNAHORA_SERVER, KUTNAHORA_GAME_ID,
// KUTNAHORA_SEAT, KUTNAHORA_TOKEN), or from flags: --create makes a game and joins it, --game ID joins a
// free seat of a waiting game; --server HOST:PORT (or unix:/path) says where. In an arena (Arena.java)
// --arena ADDRESS --register NAME --key-file FILE registers the bot, and --arena ADDRESS --key-file FILE
// --pool P --games N plays rated games (P: pools such as 2 or 2,4, played at once).
package kutnahora.bot;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
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
  /** Put in a Play stream's inbox to leave the game (the arena abandoned it). */
  static final Object LEAVE = new Object();
  private static final java.util.Set<String> FLAGS =
      java.util.Set.of(
          "--server", "--game", "--create", "--players", "--arena", "--register", "--key-file",
          "--pool", "--games", "--retry-for");
  static final String USAGE =
      String.join(
          "\n",
          "usage: kutnahora-java-bot [--server ADDRESS] (--create [--players N] | --game ID)",
          "       kutnahora-java-bot --arena ADDRESS --register NAME --key-file FILE",
          "       kutnahora-java-bot --arena ADDRESS [--key-file FILE] [--pool POOLS] [--games N]"
              + " [--retry-for SECONDS]",
          "  --server     the game server (default $KUTNAHORA_SERVER, else localhost:50051)",
          "  --create     create a game of --players players (default 2) and join its seat 0",
          "  --game       join a free seat of this waiting game",
          "  --arena      an arena's address: play rated games there (or register with --register)",
          "  --register   register NAME with the arena, write its API key to --key-file (a new file:",
          "               one that exists is never overwritten), and exit",
          "  --key-file   the file holding the bot's arena API key (default $KUTNAHORA_ARENA_KEY)",
          "  --pool       the arena pools to seek games in, comma-separated, such as 2 or 2,4 (played",
          "               at once; default 2)",
          "  --games      rated games to play in each pool (default 1; 0 plays until stopped)",
          "  --retry-for  seconds to retry an arena or game server out of reach (default 30)");

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

  /**
   * What went wrong, in words: the status's description and ErrorInfo reason, or for a connection that
   * failed (UNAVAILABLE) the cause the transport gives, such as "Connection refused".
   */
  static String explain(Throwable error) {
    Status status = Status.fromThrowable(error);
    String why = reason(error);
    String message = status.getDescription() == null ? status.getCode().name() : status.getDescription();
    if (status.getCode() == Status.Code.UNAVAILABLE) {
      Throwable cause = status.getCause();
      while (cause != null && cause.getCause() != null && cause.getCause() != cause) {
        cause = cause.getCause();
      }
      if (cause != null && cause.getMessage() != null) {
        message = "the connection failed: " + cause.getMessage();
      } else {
        message = "the connection failed: " + message;
      }
    }
    return message + (why.isEmpty() ? "" : " (" + why + ")");
  }

  static int fail(String what, Throwable error) {
    System.err.println("kutnahora-java-bot: " + what + ": " + explain(error));
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
    Arena.Options arena = new Arena.Options();
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (flag.equals("--help") || flag.equals("-h")) {
        System.out.println(
            "A Kutná Hora starter bot: plays the first legal option of every decision.\n" + USAGE);
        return 0;
      }
      if (!FLAGS.contains(flag)) {
        return usage("unknown argument " + flag);
      }
      if (!flag.equals("--create") && i + 1 >= args.length) {
        return usage(flag + " needs a value");
      }
      try {
        switch (flag) {
          case "--server":
            server = args[++i];
            break;
          case "--game":
            gameId = args[++i];
            token = "";
            break;
          case "--create":
            create = true;
            token = "";
            break;
          case "--players":
            players = Integer.parseInt(args[++i]);
            break;
          case "--arena":
            arena.address = args[++i];
            break;
          case "--register":
            arena.register = args[++i];
            break;
          case "--key-file":
            arena.keyFile = args[++i];
            break;
          case "--pool":
            arena.pools = Arena.parsePools(args[++i]);
            break;
          case "--games":
            arena.games = Integer.parseInt(args[++i]);
            break;
          case "--retry-for":
            arena.retryFor = Integer.parseInt(args[++i]);
            break;
          default:
            return usage("unknown argument " + flag);
        }
      } catch (NumberFormatException error) {
        return usage(flag + " takes a number, not '" + args[i] + "'");
      }
    }
    if (arena.games < 0 || arena.retryFor < 0) {
      return usage("--games and --retry-for take 0 or more");
    }
    if (arena.pools.isEmpty()) {
      return usage("--pool needs at least one pool, such as 2 or 2,4");
    }
    if (!arena.register.isEmpty() && arena.address.isEmpty()) {
      return usage("--register needs --arena, the arena's address");
    }
    if (!arena.register.isEmpty()) {
      return Arena.register(arena);
    }
    if (!arena.address.isEmpty()) {
      return Arena.play(arena);
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
            return fail("cannot create a game at " + server, error);
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
          return fail("cannot join game " + gameId + " at " + server, error);
        }
        System.out.println("joined game " + gameId + " as seat " + seat);
      }
      Played played = playSeat(channel, gameId, seat, token, new LinkedBlockingQueue<>());
      if (played.ended == null) {
        return fail("the Play stream of game " + gameId + " at " + server + " failed", played.error);
      }
      GameEnded ended = played.ended;
      for (SeatResult result : ended.getResult().getSeatsList()) {
        if (result.getSeat() == seat) {
          System.out.println(
              "game " + gameId + " " + ended.getStatus() + ": seat " + seat + " scored "
                  + result.getScore() + (result.getWinner() ? " and won" : ""));
        }
      }
      return ended.getStatus() == GameStatus.GAME_STATUS_FINISHED ? 0 : 1;
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

  static int usage(String problem) {
    System.err.println("kutnahora-java-bot: " + problem + "\n" + USAGE);
    return 2;
  }

  /** How a Play stream ended: the GameEnded message, or the error, or left (the arena abandoned it). */
  static final class Played {
    GameEnded ended;
    Throwable error;
    boolean left;
  }

  /**
   * Answers every YourTurn on the seat's Play stream until the game ends; LEAVE put in the inbox ends
   * the stream at once.
   */
  static Played playSeat(
      ManagedChannel channel, String gameId, int seat, String token, BlockingQueue<Object> inbox)
      throws InterruptedException {
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer " + token);
    PlayServiceGrpc.PlayServiceStub stub =
        PlayServiceGrpc.newStub(channel)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
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
    Played played = new Played();
    while (true) {
      Object next = inbox.take();
      if (next instanceof Throwable) {
        played.error = (Throwable) next;
        return played;
      }
      if (next == END) {
        played.error =
            Status.UNKNOWN
                .withDescription("the server closed the stream before the game ended")
                .asRuntimeException();
        return played;
      }
      if (next == LEAVE) {
        ((ClientCallStreamObserver<PlayRequest>) stream).cancel("the arena abandoned the game", null);
        played.left = true;
        return played;
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
          played.ended = message.getGameEnded();
          stream.onCompleted();
          return played;
        default:
          break;
      }
    }
  }
}
