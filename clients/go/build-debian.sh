#!/bin/sh
# Build the Go starter bot with Debian's packages only (no module downloads), in GOPATH mode:
#   apt-get install golang-go golang-google-grpc-dev golang-google-protobuf-dev \
#     golang-github-golang-protobuf-1-5-dev protobuf-compiler
#   sh clients/go/build-debian.sh [WORK]      # the bot ends up in WORK/bot (default: ./build)
# Debian's own protoc-gen-go predates proto3 `optional`, so the plugins are built from the Go sources that
# golang-google-protobuf-dev and golang-google-grpc-dev install.
set -eu
KIT="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mkdir -p "${1:-build}" && cd "${1:-build}" && pwd)"
export GO111MODULE=off GOPATH="$WORK/gopath:/usr/share/gocode" GOCACHE="$WORK/cache" GOFLAGS=
mkdir -p "$WORK/bin" "$WORK/gopath/src/kutnahora"
[ -x "$WORK/bin/protoc-gen-go" ] || go build -o "$WORK/bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
[ -x "$WORK/bin/protoc-gen-go-grpc" ] || go build -o "$WORK/bin/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc
rm -rf "$WORK/gopath/src/kutnahora/bot"
mkdir -p "$WORK/gopath/src/kutnahora/bot"
cp "$KIT"/*.go "$KIT/generate.sh" "$WORK/gopath/src/kutnahora/bot/"
# The protos: PROTOS, else those the tournament runner gives builds (KUTNAHORA_PROTOS), else the repository's.
PROTOS="${PROTOS:-${KUTNAHORA_PROTOS:-$KIT/../../protos}}" PLUGINS="$WORK/bin" sh "$WORK/gopath/src/kutnahora/bot/generate.sh"
(cd "$WORK/gopath/src/kutnahora/bot" && go build -o "$WORK/bot" .)
echo "built $WORK/bot"
