// Rated games in an arena: --register NAME --key-file FILE registers the bot (its own step: it plays no
// game; a key file that exists is never overwritten); --arena ADDRESS --key-file FILE --pool P --games N
// seeks a game in each pool of P (comma-separated, such as 2,4, played at once), plays the matched seat on
// the game server the arena names and seeks again, until N games of each pool were rated. Beside it the arena's event stream
// (ArenaService.StreamEvents) stays open: a game the arena reports abandoned is left at once, and each
// rated result is printed with its rating change. Only rated games count toward --games.
package kutnahora.bot;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import kutnahora.v1.ArenaServiceGrpc;
import kutnahora.v1.ArenaServiceOuterClass.BotGameAbandoned;
import kutnahora.v1.ArenaServiceOuterClass.BotGameFinished;
import kutnahora.v1.ArenaServiceOuterClass.PoolRating;
import kutnahora.v1.ArenaServiceOuterClass.RegisterBotRequest;
import kutnahora.v1.ArenaServiceOuterClass.RegisterBotResponse;
import kutnahora.v1.ArenaServiceOuterClass.SeekMatched;
import kutnahora.v1.ArenaServiceOuterClass.SeekRequest;
import kutnahora.v1.ArenaServiceOuterClass.SeekResponse;
import kutnahora.v1.ArenaServiceOuterClass.StreamEventsRequest;
import kutnahora.v1.ArenaServiceOuterClass.StreamEventsResponse;
import kutnahora.v1.Game.GameStatus;
import kutnahora.v1.PlayServiceOuterClass.GameEnded;

final class Arena {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private Arena() {}

  /** What the arena flags say. */
  static final class Options {
    String address = "";
    String register = "";
    String keyFile = "";
    List<String> pools = List.of("2");
    int games = 1;
    int retryFor = 30;
  }

  static ManagedChannel channel(String address) {
    return ManagedChannelBuilder.forTarget(address).usePlaintext().build();
  }

  static ClientInterceptor withKey(String key) {
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer " + key);
    return MetadataUtils.newAttachHeadersInterceptor(headers);
  }

  /** The pools of --pool: separated by commas (such as 2 or 2,4), each named once. */
  static List<String> parsePools(String text) {
    Set<String> pools = new LinkedHashSet<>();
    for (String pool : text.split(",")) {
      if (!pool.trim().isEmpty()) {
        pools.add(pool.trim());
      }
    }
    return new ArrayList<>(pools);
  }

  /**
   * Registers the bot's name and writes its API key to the key file (readable by its owner only). The
   * arena shows a key once, so a key file that exists (it may hold an earlier key) is never overwritten:
   * the bot refuses before it registers.
   */
  static int register(Options options) throws InterruptedException {
    if (options.keyFile.isEmpty()) {
      System.err.println(
          "kutnahora-java-bot: --register needs --key-file, the file the new key is written to");
      return 2;
    }
    if (Files.exists(Paths.get(options.keyFile), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      System.err.println(
          "kutnahora-java-bot: " + options.keyFile
              + " exists (it may hold a key); name a new file, or delete it first");
      return 2;
    }
    ManagedChannel channel = channel(options.address);
    try {
      RegisterBotResponse registered;
      try {
        registered =
            ArenaServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(30, TimeUnit.SECONDS)
                .registerBot(RegisterBotRequest.newBuilder().setName(options.register).build());
      } catch (StatusRuntimeException error) {
        return Bot.fail(
            "cannot register " + options.register + " at the arena " + options.address, error);
      }
      Path path = Paths.get(options.keyFile);
      try {
        Files.createFile(
            path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.write(path, (registered.getApiKey() + "\n").getBytes(StandardCharsets.UTF_8));
      } catch (IOException error) {
        System.err.println(
            "kutnahora-java-bot: registered " + options.register + ", but cannot write its key to "
                + options.keyFile + ": " + error);
        return 1;
      }
      System.out.println(
          "registered " + registered.getName() + "; its key is in " + options.keyFile);
      return 0;
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /**
   * Follows the bot's ArenaService.StreamEvents stream: prints each rated or abandoned game, tells the
   * game being played when the arena abandons it, and opens the stream again after a drop.
   */
  static final class Events {
    private final ArenaServiceGrpc.ArenaServiceStub arena;
    private final ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "arena-events");
              thread.setDaemon(true);
              return thread;
            });
    final CountDownLatch opened = new CountDownLatch(1);
    private final Set<String> ruled = new HashSet<>();
    private final Set<String> abandoned = new HashSet<>();
    private final Map<String, BlockingQueue<Object>> playing = new HashMap<>();
    private boolean working = true;
    private volatile boolean stopping;
    private long delay = 500;

    Events(ManagedChannel channel, String key) {
      ClientInterceptor onHeaders =
          new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(
                MethodDescriptor<Q, R> method, CallOptions callOptions, Channel next) {
              return new ForwardingClientCall.SimpleForwardingClientCall<Q, R>(
                  next.newCall(method, callOptions)) {
                @Override
                public void start(Listener<R> listener, Metadata headers) {
                  super.start(
                      new ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(
                          listener) {
                        @Override
                        public void onHeaders(Metadata received) {
                          opened.countDown(); // the arena listens: no event after this is missed
                          super.onHeaders(received);
                        }
                      },
                      headers);
                }
              };
            }
          };
      arena = ArenaServiceGrpc.newStub(channel).withInterceptors(withKey(key), onHeaders);
      open();
    }

    private void open() {
      if (stopping) {
        return;
      }
      arena.streamEvents(
          StreamEventsRequest.getDefaultInstance(),
          new StreamObserver<StreamEventsResponse>() {
            @Override
            public void onNext(StreamEventsResponse message) {
              handle(message);
            }

            @Override
            public void onError(Throwable error) {
              dropped(error);
            }

            @Override
            public void onCompleted() {
              dropped(Status.UNAVAILABLE.withDescription("the stream ended").asRuntimeException());
            }
          });
    }

    private void dropped(Throwable error) {
      if (stopping) {
        return;
      }
      Status.Code code = Status.fromThrowable(error).getCode();
      if (code == Status.Code.UNAUTHENTICATED
          || code == Status.Code.PERMISSION_DENIED
          || code == Status.Code.UNIMPLEMENTED) {
        Bot.fail("the arena refused its event stream", error);
        synchronized (this) {
          working = false;
          notifyAll();
        }
        opened.countDown();
        return;
      }
      long wait;
      synchronized (this) {
        wait = delay;
        delay = Math.min(delay * 2, 5000);
      }
      timer.schedule(this::open, wait, TimeUnit.MILLISECONDS); // open it again
    }

    private synchronized void handle(StreamEventsResponse message) {
      delay = 500;
      if (message.hasFinished()) {
        BotGameFinished done = message.getFinished();
        PoolRating before = done.getRatingBefore();
        PoolRating after = done.getRatingAfter();
        System.out.println(
            String.format(
                Locale.ROOT,
                "pool %s: %s rated, place %d: μ %.2f → %.2f, σ %.2f → %.2f, conservative %+.2f → %+.2f",
                done.getPool(), done.getGameId(), done.getPlace(), before.getMu(), after.getMu(),
                before.getSigma(), after.getSigma(), before.getConservative(),
                after.getConservative()));
        ruled.add(done.getGameId());
      } else if (message.hasAbandoned()) {
        BotGameAbandoned lost = message.getAbandoned();
        System.out.println(
            "pool " + lost.getPool() + ": " + lost.getGameId() + " abandoned, not rated: "
                + lost.getMessage());
        ruled.add(lost.getGameId());
        abandoned.add(lost.getGameId());
        BlockingQueue<Object> inbox = playing.get(lost.getGameId());
        if (inbox != null) {
          inbox.add(Bot.LEAVE); // leave the game at once
        }
      }
      notifyAll();
    }

    /** The inbox of the game being played: told to leave when the arena abandons the game. */
    synchronized void watch(String gameId, BlockingQueue<Object> inbox) {
      playing.put(gameId, inbox);
      if (abandoned.contains(gameId)) {
        inbox.add(Bot.LEAVE);
      }
    }

    /** Stops watching the game; true if the arena abandoned it. */
    synchronized boolean forget(String gameId) {
      playing.remove(gameId);
      return abandoned.contains(gameId);
    }

    /** Waits (at most millis) until the arena rated or abandoned every game. */
    synchronized void waitRuled(List<String> games, long millis) throws InterruptedException {
      long giveUp = System.currentTimeMillis() + millis;
      while (working && !ruled.containsAll(games)) {
        long left = giveUp - System.currentTimeMillis();
        if (left <= 0) {
          return;
        }
        wait(left);
      }
    }

    void stop() {
      stopping = true;
      timer.shutdownNow();
    }
  }

  /** Waits before the next retry: half to all of delay[0] milliseconds, which then doubles to 5 s. */
  static void backoff(long[] delay) throws InterruptedException {
    Thread.sleep(delay[0] / 2 + ThreadLocalRandom.current().nextLong(delay[0] / 2 + 1));
    delay[0] = Math.min(delay[0] * 2, 5000);
  }

  static boolean isTransient(Throwable error) {
    Status.Code code = Status.fromThrowable(error).getCode();
    return code == Status.Code.UNAVAILABLE
        || code == Status.Code.CANCELLED
        || code == Status.Code.INTERNAL;
  }

  /**
   * Seeks until matched. A ticket refused with ALREADY_EXISTS (another process of this bot seeks in the
   * pool) is asked for again after a pause; an arena out of reach is tried again for up to --retry-for.
   */
  static SeekMatched seek(
      ArenaServiceGrpc.ArenaServiceBlockingStub arena, Options options, String pool)
      throws InterruptedException {
    long[] delay = {500};
    long failingSince = 0;
    boolean toldTaken = false;
    boolean toldAway = false;
    while (true) {
      try {
        Iterator<SeekResponse> stream =
            arena.seek(SeekRequest.newBuilder().setPool(pool).build());
        SeekMatched matched = null;
        while (stream.hasNext()) {
          SeekResponse message = stream.next();
          if (message.hasMatched()) {
            matched = message.getMatched();
          }
        }
        if (matched != null) {
          return matched;
        }
        throw Status.UNKNOWN
            .withDescription("the arena ended the Seek without a match")
            .asRuntimeException();
      } catch (StatusRuntimeException error) {
        if (error.getStatus().getCode() == Status.Code.ALREADY_EXISTS) {
          if (!toldTaken) {
            System.out.println(
                "pool " + pool + ": another process of this bot already seeks in this pool ("
                    + Bot.reason(error) + "); this one waits and asks again.");
            toldTaken = true;
          }
          failingSince = 0;
        } else if (isTransient(error)) {
          long now = System.currentTimeMillis();
          if (failingSince == 0) {
            failingSince = now;
          }
          if (now - failingSince + delay[0] > options.retryFor * 1000L) {
            throw error;
          }
          if (!toldAway) {
            System.err.println(
                "kutnahora-java-bot: cannot reach the arena at " + options.address + " ("
                    + Bot.explain(error) + "); retrying for up to " + options.retryFor + " s");
            toldAway = true;
          }
        } else {
          throw error;
        }
      }
      backoff(delay);
    }
  }

  /**
   * Rated games in every pool at once: seek, play the matched seat, seek again, until options.games of
   * each pool finished (0: on). A pool whose seeking fails ends the bot.
   */
  static int play(Options options) throws IOException, InterruptedException {
    String key =
        options.keyFile.isEmpty()
            ? Bot.env("KUTNAHORA_ARENA_KEY", "")
            : new String(Files.readAllBytes(Paths.get(options.keyFile)), StandardCharsets.UTF_8);
    key = key.trim();
    if (key.isEmpty()) {
      System.err.println(
          "kutnahora-java-bot: no arena API key: give --key-file FILE (from --register NAME) or set"
              + " KUTNAHORA_ARENA_KEY");
      return 2;
    }
    ManagedChannel channel = channel(options.address);
    Events events = new Events(channel, key);
    Map<String, ManagedChannel> servers = Collections.synchronizedMap(new HashMap<>());
    ExecutorService pools = Executors.newFixedThreadPool(options.pools.size());
    try {
      events.opened.await(5, TimeUnit.SECONDS);
      ArenaServiceGrpc.ArenaServiceBlockingStub arena =
          ArenaServiceGrpc.newBlockingStub(channel).withInterceptors(withKey(key));
      List<String> finished = Collections.synchronizedList(new ArrayList<>());
      ExecutorCompletionService<Integer> done = new ExecutorCompletionService<>(pools);
      for (String pool : options.pools) {
        done.submit(() -> playPool(arena, options, pool, events, servers, finished));
      }
      for (int i = 0; i < options.pools.size(); i++) {
        int code;
        try {
          code = done.take().get();
        } catch (ExecutionException error) {
          return Bot.fail("a pool's games failed", error.getCause());
        }
        if (code != 0) {
          return code;
        }
      }
      events.waitRuled(new ArrayList<>(finished), 10_000); // hear the last rating changes
      return 0;
    } finally {
      pools.shutdownNow();
      events.stop();
      synchronized (servers) {
        for (ManagedChannel server : servers.values()) {
          server.shutdownNow();
        }
      }
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** One pool's rated games, until options.games of them finished (0: on); adds them to finished. */
  static int playPool(
      ArenaServiceGrpc.ArenaServiceBlockingStub arena,
      Options options,
      String pool,
      Events events,
      Map<String, ManagedChannel> servers,
      List<String> finished)
      throws InterruptedException {
    int count = 0;
    String total = options.games > 0 ? "/" + options.games : "";
    while (options.games == 0 || count < options.games) {
      SeekMatched matched;
      try {
        matched = seek(arena, options, pool);
      } catch (StatusRuntimeException error) {
        return Bot.fail(
            "cannot seek a game in pool " + pool + " at the arena " + options.address, error);
      }
      ManagedChannel server = servers.computeIfAbsent(matched.getServerAddress(), Arena::channel);
      String gameId = matched.getGameId();
      int seat = matched.getSeat();
      Bot.Played played;
      long[] delay = {200};
      long started = System.currentTimeMillis();
      while (true) { // a dropped Play stream is opened again (the server sends the turn again)
        BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        events.watch(gameId, inbox);
        played = Bot.playSeat(server, gameId, seat, matched.getSeatToken(), inbox);
        if (played.ended != null
            || played.left
            || Status.fromThrowable(played.error).getCode() != Status.Code.UNAVAILABLE
            || System.currentTimeMillis() - started + delay[0] > options.retryFor * 1000L) {
          break;
        }
        backoff(delay);
      }
      if (events.forget(gameId)) {
        continue; // the arena abandoned the game (its event was printed): seek again
      }
      if (played.ended == null) {
        System.out.println(
            "pool " + pool + ": " + gameId + " given up: " + Bot.explain(played.error)
                + ". Seeking again.");
        continue;
      }
      GameEnded ended = played.ended;
      String state = ended.getStatus().name().replace("GAME_STATUS_", "").toLowerCase(Locale.ROOT);
      if (ended.getStatus() != GameStatus.GAME_STATUS_FINISHED) {
        System.out.println(
            "pool " + pool + ": " + gameId + " " + state
                + " on the game server, not rated. Seeking again.");
        continue;
      }
      finished.add(gameId);
      count++;
      List<String> others = new ArrayList<>();
      for (int i = 0; i < matched.getSeatNamesCount(); i++) {
        if (i != seat) {
          others.add(matched.getSeatNames(i));
        }
      }
      boolean won = ended.getResult().getWinnersList().contains(seat);
      System.out.println(
          "pool " + pool + " game " + count + total + ": " + gameId + " seat " + seat + " vs "
              + String.join(", ", others) + ": " + state + (won ? ", won" : ""));
    }
    return 0;
  }
}
