// Command bot is a Kutná Hora starter bot in Go: it joins a seat, plays the first legal option of every
// decision over the Play stream, and says why the server refused anything (the ErrorInfo reason).
//
// The seat comes from the environment the tournament runner sets (KUTNAHORA_SERVER, KUTNAHORA_GAME_ID,
// KUTNAHORA_SEAT, KUTNAHORA_TOKEN), or from flags: -create makes a game and joins its seat 0, -game ID
// joins a free seat of a waiting game. In an arena (arena.go) -register NAME -key-file FILE registers the
// bot, and -arena ADDRESS -key-file FILE -pool P -games N plays rated games (P: pools such as 2 or 2,4). Replace choose() with your
// own rule.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "kutnahora/bot/kutnahorav1"
)

// choose picks the option to play: here the first legal one.
func choose(observation *pb.Observation) *pb.LegalOption {
	return observation.GetPending().GetOptions()[0]
}

// reason is the server's ErrorInfo reason for a refused call (such as SEAT_TAKEN), or "".
func reason(err error) string {
	for _, detail := range status.Convert(err).Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok && info.GetDomain() == "kutnahora.v1" {
			return info.GetReason()
		}
	}
	return ""
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "kutnahora-go-bot: "+format+"\n", args...)
	os.Exit(1)
}

func describe(err error) string {
	if r := reason(err); r != "" {
		return fmt.Sprintf("%s (%s)", status.Convert(err).Message(), r)
	}
	return status.Convert(err).Message()
}

func main() {
	server := flag.String("server", envOr("KUTNAHORA_SERVER", "localhost:50051"), "server address (host:port or unix:/path)")
	create := flag.Bool("create", false, "create a game and join its seat 0")
	players := flag.Int("players", 2, "players in a created game")
	gameID := flag.String("game", os.Getenv("KUTNAHORA_GAME_ID"), "the game to join")
	name := flag.String("name", "go-first-option", "the name shown for this seat")
	arena := flag.String("arena", "", "an arena's address (host:port): play rated games there, or register with -register")
	register := flag.String("register", "", "register this name with the -arena, write its key to -key-file (a new file: one that exists is never overwritten), and exit")
	keyFile := flag.String("key-file", "", "the file holding the bot's arena API key (default: $KUTNAHORA_ARENA_KEY)")
	pool := flag.String("pool", "2", "the arena pools to seek games in, comma-separated, such as 2 or 2,4 (played at once)")
	rated := flag.Int("games", 1, "rated games to play in each pool of the arena (0: until stopped)")
	retryFor := flag.Int("retry-for", 30, "seconds to retry an arena or game server out of reach")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "kutnahora-go-bot: unexpected argument %q\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}
	if *register != "" || *arena != "" {
		if *arena == "" {
			fail("-register needs -arena, the arena's address")
		}
		if *rated < 0 || *retryFor < 0 {
			fail("-games and -retry-for must be 0 or more")
		}
		pools := parsePools(*pool)
		if len(pools) == 0 {
			fail("-pool needs at least one pool, such as 2 or 2,4")
		}
		options := arenaOptions{*arena, *keyFile, *register, pools, *rated, time.Duration(*retryFor) * time.Second}
		if *register != "" {
			registerBot(options)
		} else {
			playArena(options)
		}
		return
	}

	// grpc-go 1.33 (Debian's) has no credentials/insecure package; WithInsecure is its plain connection.
	conn, err := grpc.Dial(*server, grpc.WithInsecure())
	if err != nil {
		fail("cannot connect to %s: %v", *server, err)
	}
	defer conn.Close()
	games := pb.NewGameServiceClient(conn)
	ctx := context.Background()

	seat, token := int32(0), os.Getenv("KUTNAHORA_TOKEN")
	if text := os.Getenv("KUTNAHORA_SEAT"); text != "" && token != "" && !*create {
		value, err := strconv.Atoi(text)
		if err != nil {
			fail("KUTNAHORA_SEAT is not a number: %q", text)
		}
		seat = int32(value)
	} else {
		if *create {
			created, err := games.CreateGame(ctx, &pb.CreateGameRequest{Options: &pb.GameOptions{Players: int32(*players)}})
			if err != nil {
				fail("cannot create a game at %s: %s", *server, describe(err))
			}
			*gameID = created.GetGame().GetGameId()
			fmt.Printf("created game %s for %d players\n", *gameID, *players)
		}
		if *gameID == "" {
			fail("say which game: -create, -game ID, or KUTNAHORA_GAME_ID with KUTNAHORA_SEAT and KUTNAHORA_TOKEN")
		}
		joined, err := games.JoinGame(ctx, &pb.JoinGameRequest{GameId: *gameID, Name: *name})
		if err != nil {
			fail("cannot join game %s at %s: %s", *gameID, *server, describe(err))
		}
		seat, token = joined.GetSeat(), joined.GetSeatToken()
		fmt.Printf("joined game %s as seat %d\n", *gameID, seat)
	}

	ended, err := play(ctx, pb.NewPlayServiceClient(conn), *gameID, seat, token)
	if err != nil {
		fail("game %s at %s: %s", *gameID, *server, describe(err))
	}
	for _, result := range ended.GetResult().GetSeats() {
		if result.GetSeat() == seat {
			fmt.Printf("game %s %s: seat %d scored %d (winner: %v)\n", *gameID, ended.GetStatus(), seat, result.GetScore(), result.GetWinner())
		}
	}
	if ended.GetStatus() != pb.GameStatus_GAME_STATUS_FINISHED {
		os.Exit(1)
	}
}

// play answers every YourTurn on the seat's Play stream until the game ends.
func play(ctx context.Context, client pb.PlayServiceClient, gameID string, seat int32, token string) (*pb.GameEnded, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	stream, err := client.Play(ctx)
	if err != nil {
		return nil, err
	}
	start := &pb.PlayRequest{Message: &pb.PlayRequest_Start{Start: &pb.PlayStart{GameId: gameID, Seat: seat}}}
	if err := stream.Send(start); err != nil {
		return nil, err
	}
	answered := int64(-1)
	for {
		message, err := stream.Recv()
		if err == io.EOF {
			return nil, fmt.Errorf("the server closed the stream before the game ended")
		}
		if err != nil {
			return nil, err
		}
		switch m := message.GetMessage().(type) {
		case *pb.PlayResponse_YourTurn:
			observation := m.YourTurn.GetObservation()
			if observation.GetVersion() <= answered {
				continue // already answered this version
			}
			option := choose(observation)
			answered = observation.GetVersion()
			decision := &pb.PlayDecision{
				Version: observation.GetVersion(),
				Answer:  &pb.Answer{Answer: &pb.Answer_OptionIndex{OptionIndex: option.GetIndex()}},
			}
			if err := stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Decision{Decision: decision}}); err != nil {
				return nil, err
			}
		case *pb.PlayResponse_Rejected:
			fmt.Fprintf(os.Stderr, "decision refused (%s): %s\n", m.Rejected.GetReason(), m.Rejected.GetMessage())
			if m.Rejected.GetReason() == pb.RejectReason_REJECT_REASON_STALE_VERSION {
				answered = -1
			}
		case *pb.PlayResponse_GameEnded:
			stream.CloseSend()
			return m.GameEnded, nil
		}
	}
}

func envOr(key, fallback string) string {
	if value := os.Getenv(key); value != "" {
		return value
	}
	return fallback
}
