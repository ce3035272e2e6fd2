#!/bin/sh
# Generate the Go code of kutnahora.v1 into ./kutnahorav1 from the project's .proto files.
# Needs protoc with protoc-gen-go and protoc-gen-go-grpc on PATH (or in $PLUGINS).
#   PROTOS: the folder holding kutnahora/v1/*.proto (default: ../../protos)
set -eu
cd "$(dirname "$0")"
PROTOS="${PROTOS:-$(pwd)/../../protos}"
PLUGINS="${PLUGINS:-}"
MODULE="kutnahora/bot/kutnahorav1"
mapping=""
for proto in "$PROTOS"/kutnahora/v1/*.proto; do
  mapping="$mapping,Mkutnahora/v1/$(basename "$proto")=$MODULE"
done
mapping="${mapping#,}"
mkdir -p kutnahorav1
if [ -n "$PLUGINS" ]; then PATH="$PLUGINS:$PATH"; fi
protoc -I "$PROTOS" \
  --go_out=kutnahorav1 --go_opt=paths=source_relative,"$mapping" \
  --go-grpc_out=kutnahorav1 --go-grpc_opt=paths=source_relative,"$mapping" \
  "$PROTOS"/kutnahora/v1/*.proto
# paths=source_relative writes kutnahorav1/kutnahora/v1/*.go: flatten to one package folder.
mv kutnahorav1/kutnahora/v1/*.go kutnahorav1/
rm -rf kutnahorav1/kutnahora
