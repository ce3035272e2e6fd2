// Rated games in an arena: -register NAME -key-file FILE registers the bot (its own step: it plays no
// game; a key file that exists is never overwritten), then -arena ADDRESS -key-file FILE -pool P -games N
// seeks a game in each pool of P (comma-separated, such as 2,4, played at once), plays the matched seat on
// the game server the arena names, and seeks again, until N games of each pool were rated. Beside it the arena's event stream
// (ArenaService.StreamEvents) stays open: a game the arena reports abandoned is left at once, and each
// rated result is printed with the rating change. Only rated games count toward -games.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "kutnahora/bot/kutnahorav1"
)

type arenaOptions struct {
	address  string
	keyFile  string
	register string
	pools    []string
	games    int
	retryFor time.Duration
}

// parsePools reads -pool: pools separated by commas (such as 2 or 2,4), each named once.
func parsePools(text string) []string {
	var pools []string
	seen := map[string]bool{}
	for _, pool := range strings.Split(text, ",") {
		if pool = strings.TrimSpace(pool); pool != "" && !seen[pool] {
			seen[pool] = true
			pools = append(pools, pool)
		}
	}
	return pools
}

// registerBot registers the bot's name and writes its API key to keyFile (readable by its owner only).
// The arena shows a key once, so a key file that exists (it may hold the key of an earlier registration)
// is never overwritten: the bot refuses before it registers.
func registerBot(options arenaOptions) {
	if options.keyFile == "" {
		fail("-register needs -key-file, the file the new key is written to")
	}
	if _, err := os.Lstat(options.keyFile); err == nil {
		fmt.Fprintf(os.Stderr, "kutnahora-go-bot: %s exists (it may hold a key); name a new file, or delete it first\n", options.keyFile)
		os.Exit(2)
	}
	conn := dial(options.address)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	registered, err := pb.NewArenaServiceClient(conn).RegisterBot(ctx, &pb.RegisterBotRequest{Name: options.register})
	if err != nil {
		fail("cannot register %s at the arena %s: %s", options.register, options.address, describe(err))
	}
	file, err := os.OpenFile(options.keyFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = file.WriteString(registered.GetApiKey() + "\n")
		if closeErr := file.Close(); err == nil {
			err = closeErr
		}
	}
	if err != nil {
		fail("registered %s, but cannot write its key to %s: %v", options.register, options.keyFile, err)
	}
	fmt.Printf("registered %s; its key is in %s\n", registered.GetName(), options.keyFile)
}

func readKey(keyFile string) string {
	if keyFile == "" {
		return strings.TrimSpace(os.Getenv("KUTNAHORA_ARENA_KEY"))
	}
	text, err := os.ReadFile(keyFile)
	if err != nil {
		fail("cannot read the key file: %v", err)
	}
	return strings.TrimSpace(string(text))
}

func dial(address string) *grpc.ClientConn {
	conn, err := grpc.Dial(address, grpc.WithInsecure())
	if err != nil {
		fail("cannot connect to %s: %v", address, err)
	}
	return conn
}

func withKey(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
}

// events follows the bot's ArenaService.StreamEvents stream: which games were rated or abandoned.
type events struct {
	mu        sync.Mutex
	opened    chan struct{}
	openOnce  sync.Once
	changed   chan struct{}
	working   bool
	ruled     map[string]bool
	abandoned map[string]bool
	playing   map[string]context.CancelFunc
}

func followEvents(ctx context.Context, arena pb.ArenaServiceClient, key string) *events {
	e := &events{
		opened: make(chan struct{}), changed: make(chan struct{}, 1), working: true,
		ruled: map[string]bool{}, abandoned: map[string]bool{}, playing: map[string]context.CancelFunc{},
	}
	go e.run(withKey(ctx, key), arena)
	return e
}

func (e *events) markOpened() { e.openOnce.Do(func() { close(e.opened) }) }

func (e *events) run(ctx context.Context, arena pb.ArenaServiceClient) {
	delay := 500 * time.Millisecond
	for ctx.Err() == nil {
		stream, err := arena.StreamEvents(ctx, &pb.StreamEventsRequest{})
		if err == nil {
			if _, err = stream.Header(); err == nil {
				e.markOpened() // the arena listens: no event after this is missed
			}
		}
		for err == nil {
			var message *pb.StreamEventsResponse
			message, err = stream.Recv()
			if err == nil {
				delay = 500 * time.Millisecond
				e.handle(message)
			}
		}
		if ctx.Err() != nil {
			return
		}
		switch status.Code(err) {
		case codes.Unauthenticated, codes.PermissionDenied, codes.Unimplemented:
			fmt.Fprintf(os.Stderr, "kutnahora-go-bot: the arena refused its event stream: %s\n", describe(err))
			e.mu.Lock()
			e.working = false
			e.mu.Unlock()
			e.markOpened()
			e.signal()
			return
		}
		time.Sleep(delay) // dropped: open it again
		if delay *= 2; delay > 5*time.Second {
			delay = 5 * time.Second
		}
	}
}

func (e *events) signal() {
	select {
	case e.changed <- struct{}{}:
	default:
	}
}

func (e *events) handle(message *pb.StreamEventsResponse) {
	if done := message.GetFinished(); done != nil {
		before, after := done.GetRatingBefore(), done.GetRatingAfter()
		fmt.Printf("pool %s: %s rated, place %d: μ %.2f → %.2f, σ %.2f → %.2f, conservative %+.2f → %+.2f\n",
			done.GetPool(), done.GetGameId(), done.GetPlace(), before.GetMu(), after.GetMu(),
			before.GetSigma(), after.GetSigma(), before.GetConservative(), after.GetConservative())
		e.mu.Lock()
		e.ruled[done.GetGameId()] = true
		e.mu.Unlock()
		e.signal()
	}
	if lost := message.GetAbandoned(); lost != nil {
		fmt.Printf("pool %s: %s abandoned, not rated: %s\n", lost.GetPool(), lost.GetGameId(), lost.GetMessage())
		e.mu.Lock()
		e.ruled[lost.GetGameId()] = true
		e.abandoned[lost.GetGameId()] = true
		if cancel := e.playing[lost.GetGameId()]; cancel != nil {
			cancel() // leave the game at once
		}
		e.mu.Unlock()
		e.signal()
	}
}

// watch registers the cancel function of a game being played; it is called at once if the arena has
// already abandoned the game.
func (e *events) watch(gameID string, cancel context.CancelFunc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.playing[gameID] = cancel
	if e.abandoned[gameID] {
		cancel()
	}
}

func (e *events) forget(gameID string) (abandoned bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.playing, gameID)
	return e.abandoned[gameID]
}

// waitRuled waits (at most until deadline) until the arena rated or abandoned every game.
func (e *events) waitRuled(gameIDs []string, deadline time.Time) {
	for {
		e.mu.Lock()
		done := !e.working
		if !done {
			done = true
			for _, id := range gameIDs {
				done = done && e.ruled[id]
			}
		}
		e.mu.Unlock()
		left := time.Until(deadline)
		if done || left <= 0 {
			return
		}
		select {
		case <-e.changed:
		case <-time.After(left):
		}
	}
}

// backoff waits for the next retry: half to all of delay, which then doubles up to 5 s.
func backoff(delay *time.Duration) {
	time.Sleep(*delay/2 + time.Duration(time.Now().UnixNano()%int64(*delay/2+1)))
	if *delay *= 2; *delay > 5*time.Second {
		*delay = 5 * time.Second
	}
}

// seek holds one ticket in the pool until the arena matches it. A ticket refused with ALREADY_EXISTS
// (another process of this bot seeks in the pool) is asked for again after a pause; an arena out of
// reach is tried again for up to retryFor.
func seek(ctx context.Context, arena pb.ArenaServiceClient, options arenaOptions, pool string) (*pb.SeekMatched, error) {
	delay := 500 * time.Millisecond
	var failingSince time.Time
	toldTaken, toldAway := false, false
	for {
		matched, err := seekOnce(ctx, arena, pool)
		if err == nil {
			return matched, nil
		}
		switch status.Code(err) {
		case codes.AlreadyExists:
			if !toldTaken {
				fmt.Printf("pool %s: another process of this bot already seeks in this pool (%s); "+
					"this one waits and asks again.\n", pool, reason(err))
				toldTaken = true
			}
			failingSince = time.Time{}
		case codes.Unavailable, codes.Canceled, codes.Internal:
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince)+delay > options.retryFor {
				return nil, err
			}
			if !toldAway {
				fmt.Fprintf(os.Stderr, "kutnahora-go-bot: cannot reach the arena at %s (%s); retrying for up to %v\n",
					options.address, status.Convert(err).Message(), options.retryFor)
				toldAway = true
			}
		default:
			return nil, err
		}
		backoff(&delay)
	}
}

func seekOnce(ctx context.Context, arena pb.ArenaServiceClient, pool string) (*pb.SeekMatched, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := arena.Seek(ctx, &pb.SeekRequest{Pool: pool})
	if err != nil {
		return nil, err
	}
	for {
		message, err := stream.Recv()
		if err == io.EOF {
			return nil, errors.New("the arena ended the Seek without a match")
		}
		if err != nil {
			return nil, err
		}
		if matched := message.GetMatched(); matched != nil {
			return matched, nil
		}
	}
}

// playArena plays rated games in every pool at once, until options.games of each finished (0: until
// stopped).
func playArena(options arenaOptions) {
	key := readKey(options.keyFile)
	if key == "" {
		fail("no arena API key: give -key-file FILE (from -register NAME) or set KUTNAHORA_ARENA_KEY")
	}
	conn := dial(options.address)
	defer conn.Close()
	arena := pb.NewArenaServiceClient(conn)
	base, stop := context.WithCancel(context.Background())
	defer stop()
	followed := followEvents(base, arena, key)
	select {
	case <-followed.opened:
	case <-time.After(5 * time.Second):
	}
	servers := &gameServers{conns: map[string]*grpc.ClientConn{}}
	var wait sync.WaitGroup
	finished := make([][]string, len(options.pools))
	for i, pool := range options.pools {
		wait.Add(1)
		go func(i int, pool string) {
			defer wait.Done()
			finished[i] = playPool(base, arena, key, pool, options, followed, servers)
		}(i, pool)
	}
	wait.Wait()
	var all []string
	for _, games := range finished {
		all = append(all, games...)
	}
	followed.waitRuled(all, time.Now().Add(10*time.Second)) // hear the last rating changes
	servers.closeAll()
}

// gameServers holds one connection to each game server the arena named, shared by the pools.
type gameServers struct {
	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
}

func (g *gameServers) get(address string) *grpc.ClientConn {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conns[address] == nil {
		g.conns[address] = dial(address)
	}
	return g.conns[address]
}

func (g *gameServers) closeAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, conn := range g.conns {
		conn.Close()
	}
}

// playPool plays rated games in one pool until options.games of them finished (0: until stopped); it
// returns their game ids.
func playPool(base context.Context, arena pb.ArenaServiceClient, key, pool string, options arenaOptions,
	followed *events, servers *gameServers) []string {
	var finished []string
	total := ""
	if options.games > 0 {
		total = fmt.Sprintf("/%d", options.games)
	}
	for options.games == 0 || len(finished) < options.games {
		matched, err := seek(withKey(base, key), arena, options, pool)
		if err != nil {
			fail("cannot seek a game in pool %s at the arena %s: %s", pool, options.address, describe(err))
		}
		server := servers.get(matched.GetServerAddress())
		gameID, seat := matched.GetGameId(), matched.GetSeat()
		ctx, cancel := context.WithCancel(base)
		followed.watch(gameID, cancel)
		ended, err := playRetrying(ctx, pb.NewPlayServiceClient(server), gameID, seat, matched.GetSeatToken(), options.retryFor)
		cancel()
		if followed.forget(gameID) {
			continue // the arena abandoned the game (its event was printed): seek again
		}
		if err != nil {
			fmt.Printf("pool %s: %s given up: %s. Seeking again.\n", pool, gameID, describe(err))
			continue
		}
		state := strings.ToLower(strings.TrimPrefix(ended.GetStatus().String(), "GAME_STATUS_"))
		if ended.GetStatus() != pb.GameStatus_GAME_STATUS_FINISHED {
			fmt.Printf("pool %s: %s %s on the game server, not rated. Seeking again.\n", pool, gameID, state)
			continue
		}
		finished = append(finished, gameID)
		var others []string
		for i, name := range matched.GetSeatNames() {
			if int32(i) != seat {
				others = append(others, name)
			}
		}
		won := ""
		for _, winner := range ended.GetResult().GetWinners() {
			if winner == seat {
				won = ", won"
			}
		}
		fmt.Printf("pool %s game %d%s: %s seat %d vs %s: %s%s\n", pool, len(finished), total, gameID, seat,
			strings.Join(others, ", "), state, won)
	}
	return finished
}

// playRetrying plays the seat, opening its Play stream again after a dropped connection for up to
// retryFor of failures in a row (the server sends the current turn again).
func playRetrying(ctx context.Context, client pb.PlayServiceClient, gameID string, seat int32, token string, retryFor time.Duration) (*pb.GameEnded, error) {
	delay := 200 * time.Millisecond
	started := time.Now()
	for {
		ended, err := play(ctx, client, gameID, seat, token)
		if err == nil || ctx.Err() != nil || status.Code(err) != codes.Unavailable || time.Since(started)+delay > retryFor {
			return ended, err
		}
		backoff(&delay)
	}
}
