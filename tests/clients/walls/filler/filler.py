"""Tries to fill the server through its socket (CreateGame, JoinGame, ListGames, the admin service), and
keeps a child doing so while it plays its seat with the greedy bot."""

import os
import sys

import grpc

SERVER = os.environ["KUTNAHORA_SERVER"]
CALLS = {
    "CreateGame": "/kutnahora.v1.GameService/CreateGame",
    "ListGames": "/kutnahora.v1.GameService/ListGames",
    "JoinGame": "/kutnahora.v1.GameService/JoinGame",
    "AbandonGame": "/kutnahora.v1.GameService/AbandonGame",
    "ServerReflectionInfo": "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
}


def attempt(channel: grpc.Channel, name: str) -> str:
    try:
        channel.unary_unary(CALLS[name])(b"\x0a\x02\x08\x02", timeout=5)
        return f"LEAKED {name} answered"
    except grpc.RpcError as error:
        verdict = "BLOCKED" if error.code() == grpc.StatusCode.PERMISSION_DENIED else "LEAKED"
        return f"{verdict} {name}: {error.code().name} {error.details()}"


with grpc.insecure_channel(SERVER) as channel:
    for name in CALLS:
        print(attempt(channel, name), flush=True)
    created = sum(attempt(channel, "CreateGame").startswith("LEAKED") for _ in range(300))
    print(f"{'LEAKED' if created else 'BLOCKED'} CreateGame x300: {created} created", flush=True)
if os.fork() == 0:  # the child keeps trying for as long as it lives
    with grpc.insecure_channel(SERVER) as channel:
        while True:
            if attempt(channel, "CreateGame").startswith("LEAKED"):
                print("LEAKED CreateGame from the child", flush=True)
os.execvp(sys.executable, [sys.executable, "-m", "kutnahora.clients.bots.cli", "greedy"])
