"""How fast kutnahora-web answers while an mcts seat searches: prints the figures (not a test).

    python -m tests.web.measure_responsiveness [--requests 60]

It starts a game server and kutnahora-web as a user would, times GET requests to a game's page and to its
summary with no game running, then again while a game of mcts against greedy plays itself (the mcts seat
searches about a second a move, in the web server's search process), and prints the medians and the
worst. It runs for about half a minute.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.web.conftest import start, stop


def timed(web: httpx.Client, paths: list[str], count: int) -> list[float]:
    spent = []
    for i in range(count):
        began = time.perf_counter()
        answer = web.get(paths[i % len(paths)])
        spent.append((time.perf_counter() - began) * 1000)
        assert answer.status_code == 200, answer.text
        time.sleep(0.1)
    return spent


def line(name: str, spent: list[float]) -> str:
    return (
        f"{name:<32} median {statistics.median(spent):6.1f} ms   worst {max(spent):6.1f} ms   n={len(spent)}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=60, help="requests timed in each phase (default 60)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="kutnahora-measure-"))
    server_command = [sys.executable, "-m", "kutnahora.server.main", "--host", "127.0.0.1", "--port", "0"]
    server_command += ["--db", ":memory:", "--metrics-port", "off", "--log-level", "warning"]
    game_server, address = start(server_command, r"listening on grpc://(\S+)", folder / "server.log")
    web_command = [sys.executable, "-m", "kutnahora.web.cli", "--server", address, "--port", "0"]
    web_server, url = start([*web_command, "--no-access-log"], r"serving (http://\S+)", folder / "web.log")
    try:
        with httpx.Client(base_url=url, timeout=30) as web:
            while web.get("/api/games").status_code != 200:
                time.sleep(0.2)
            same = {"origin": url}
            quiet = web.post("/api/games", json={"players": 2, "seats": ["you", "open"]}, headers=same).json()
            paths = [f"/games/{quiet['game_id']}", f"/api/games/{quiet['game_id']}"]
            idle = timed(web, paths, args.requests)
            body = {"players": 2, "seats": ["mcts", "greedy"], "delay": 0, "seed": 7}
            busy_game = web.post("/api/games", json=body, headers=same).json()["game_id"]
            time.sleep(3)  # the search process starts, and the first searches begin
            before = web.get(f"/api/games/{busy_game}").json()["game"]["version"]
            busy = timed(web, paths, args.requests)
            after = web.get(f"/api/games/{busy_game}").json()["game"]["version"]
            print(line("no game running", idle))
            print(line("while an mcts seat searches", busy))
            print(f"the mcts game moved from version {before} to {after} meanwhile")
            if re.search(r"Traceback", (folder / "web.log").read_text()):
                print("the web server's log shows a failure:", (folder / "web.log").read_text()[-2000:])
                return 1
    finally:
        stop(web_server)
        stop(game_server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
