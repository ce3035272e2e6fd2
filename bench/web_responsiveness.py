"""How fast kutnahora-web answers while an mcts seat searches: prints the figures (a benchmark, not a test).

    python -m kutnahora.bench.web_responsiveness [--requests 60]

It starts a game server and kutnahora-web as a user would, times GET requests to a game's page and to its
summary with no game running, then again while a game of mcts against greedy plays itself (the mcts seat
searches about a second a move, in the web server's search process), and prints the medians and the
worst. It runs for about half a minute.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kutnahora.bench.processes import start_serving, stop_process


class Web:
    """GET and POST JSON to one web server."""

    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, path: str) -> tuple[int, bytes]:
        """The status and body of a GET."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=30) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def get_json(self, path: str) -> Any:
        """The JSON body of a GET that succeeds."""
        status, body = self.get(path)
        if status != 200:
            raise SystemExit(f"GET {path} answered {status}: {body[:300]!r}")
        return json.loads(body)

    def post_json(self, path: str, body: dict[str, Any]) -> Any:
        """The JSON answer of a POST from the page's own origin."""
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", "origin": self.url},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())


def timed(web: Web, paths: list[str], count: int) -> list[float]:
    """Milliseconds each of ``count`` GETs took, going round ``paths``, a tenth of a second apart."""
    spent = []
    for i in range(count):
        began = time.perf_counter()
        status, body = web.get(paths[i % len(paths)])
        spent.append((time.perf_counter() - began) * 1000)
        if status != 200:
            raise SystemExit(f"GET {paths[i % len(paths)]} answered {status}: {body[:300]!r}")
        time.sleep(0.1)
    return spent


def line(name: str, spent: list[float]) -> str:
    """One printed line: the median and the worst."""
    return (
        f"{name:<32} median {statistics.median(spent):6.1f} ms   worst {max(spent):6.1f} ms   n={len(spent)}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Time the web server idle, then while an mcts seat searches; print the figures."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.web_responsiveness",
        description="Time kutnahora-web's answers with no game running, then while an mcts seat searches.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--requests", type=int, default=60, help="GET requests timed in each phase")
    args = parser.parse_args(argv)
    if args.requests <= 0:
        raise SystemExit("--requests must be positive")
    folder = Path(tempfile.mkdtemp(prefix="kutnahora-measure-"))
    server_command = [sys.executable, "-m", "kutnahora.server.main", "--host", "127.0.0.1", "--port", "0"]
    server_command += ["--db", ":memory:", "--metrics-port", "off", "--log-level", "warning"]
    game_server, address = start_serving(server_command, folder / "server.log")
    web_command = [sys.executable, "-m", "kutnahora.web.cli", "--server", address, "--port", "0"]
    web_server, url = start_serving(
        [*web_command, "--no-access-log"], folder / "web.log", r"serving (http://\S+)"
    )
    try:
        web = Web(url)
        while web.get("/api/games")[0] != 200:
            time.sleep(0.2)
        quiet = web.post_json("/api/games", {"players": 2, "seats": ["you", "open"]})
        paths = [f"/games/{quiet['game_id']}", f"/api/games/{quiet['game_id']}"]
        idle = timed(web, paths, args.requests)
        body = {"players": 2, "seats": ["mcts", "greedy"], "delay": 0, "seed": 7}
        busy_game = web.post_json("/api/games", body)["game_id"]
        time.sleep(3)  # the search process starts, and the first searches begin
        before = web.get_json(f"/api/games/{busy_game}")["game"]["version"]
        busy = timed(web, paths, args.requests)
        after = web.get_json(f"/api/games/{busy_game}")["game"]["version"]
        print(line("no game running", idle))
        print(line("while an mcts seat searches", busy))
        print(f"the mcts game moved from version {before} to {after} meanwhile")
        if re.search(r"Traceback", (folder / "web.log").read_text()):
            print("the web server's log shows a failure:", (folder / "web.log").read_text()[-2000:])
            return 1
    finally:
        stop_process(web_server)
        stop_process(game_server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
