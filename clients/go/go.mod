module kutnahora/bot

go 1.19

// go mod tidy adds google.golang.org/genproto (the ErrorInfo type) and writes go.sum.
require (
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
