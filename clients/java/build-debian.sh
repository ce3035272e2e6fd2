#!/bin/sh
# Build the Java starter bot with Debian's packages only (no Maven, no downloads):
#   apt-get install default-jdk protobuf-compiler protobuf-compiler-grpc-java-plugin libgrpc-java \
#     libprotobuf-java libgeronimo-annotation-1.3-spec-java libnetty-java libperfmark-java
#   sh clients/java/build-debian.sh [WORK]    # the bot is WORK/kutnahora-bot.jar (default: ./build)
# protoc with grpc_java_plugin generates the code of the project's .proto files (PROTOS, see below)
# and of src/main/protobuf/rpc_status.proto; javac compiles it with the bot against /usr/share/java, and the
# jar's manifest names its run-time class path there, so that `java -jar WORK/kutnahora-bot.jar` runs it.
set -eu
KIT="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mkdir -p "${1:-build}" && cd "${1:-build}" && pwd)"
# The protos: PROTOS, else those the tournament runner provides to builds (KUTNAHORA_PROTOS), else the repository's.
PROTOS="${PROTOS:-${KUTNAHORA_PROTOS:-$KIT/../../protos}}"
JARS=/usr/share/java
# Compiling needs the gRPC stubs' and protobuf's classes and javax.annotation.Generated (the geronimo jar);
# running needs gRPC's core and Netty transport, Netty's separate jars (Debian's netty-all.jar is empty),
# Guava and PerfMark.
COMPILE="grpc-api grpc-stub grpc-protobuf grpc-protobuf-lite protobuf guava geronimo-annotation-1.3-spec"
RUN="grpc-api grpc-context grpc-core grpc-netty grpc-stub grpc-protobuf grpc-protobuf-lite protobuf guava
  perfmark-api netty-buffer netty-codec netty-codec-http netty-codec-http2 netty-codec-socks netty-common
  netty-handler netty-handler-proxy netty-resolver netty-transport"
classpath() {
  separator="$1"
  shift
  out=""
  for name in "$@"; do
    [ -f "$JARS/$name.jar" ] || { echo "missing $JARS/$name.jar (see the apt-get line above)" >&2; exit 1; }
    out="$out${out:+$separator}$JARS/$name.jar"
  done
  printf '%s' "$out"
}
# shellcheck disable=SC2086
COMPILE_CP="$(classpath : $COMPILE)"
rm -rf "$WORK/generated" "$WORK/classes"
mkdir -p "$WORK/generated" "$WORK/classes"
protoc -I "$PROTOS" -I "$KIT/src/main/protobuf" \
  --java_out="$WORK/generated" \
  --grpc-java_out="$WORK/generated" --plugin=protoc-gen-grpc-java="$(command -v grpc_java_plugin)" \
  "$PROTOS"/kutnahora/v1/*.proto "$KIT/src/main/protobuf/rpc_status.proto"
find "$WORK/generated" "$KIT/src/main/java" -name '*.java' > "$WORK/sources.txt"
# javac and jar are JVMs too: a modest heap and the serial collector keep them inside the sandbox's
# address-space limit (a build runs under the same --bot-memory as the bot).
export MALLOC_ARENA_MAX=2
TOOL_JVM="-J-Xmx384m -J-XX:+UseSerialGC -J-XX:CompressedClassSpaceSize=64m -J-XX:ReservedCodeCacheSize=64m -J-XX:-UsePerfData"
# shellcheck disable=SC2086
javac $TOOL_JVM -nowarn -encoding UTF-8 --release 17 -cp "$COMPILE_CP" -d "$WORK/classes" @"$WORK/sources.txt"
# A manifest line holds at most 72 bytes: one jar per continuation line (its first space marks it as one,
# the second separates it from the jar before).
{
  printf 'Main-Class: kutnahora.bot.Bot\n'
  # shellcheck disable=SC2086
  classpath ' ' $RUN | tr ' ' '\n' | sed '1s/^/Class-Path: /; 2,$s/^/  /'
  echo
} > "$WORK/manifest.txt"
# shellcheck disable=SC2086
jar $TOOL_JVM --create --file "$WORK/kutnahora-bot.jar" --manifest "$WORK/manifest.txt" -C "$WORK/classes" .
echo "built $WORK/kutnahora-bot.jar"
