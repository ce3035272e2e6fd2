"""The web server's search process (the mcts bot thinks in a process of its own) does not outlive the web
server: stopped by SIGTERM (uvicorn re-raises it once the app has stopped, which ends the process before
any exit hook) or killed outright, the server leaves no orphan holding its memory."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.stopping import children_of, gone
from tests.web.conftest import UNLIMITED, Servers, start


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_the_search_process_ends_with_the_web_server(
    servers: Servers, tmp_path: Path, signum: signal.Signals
) -> None:
    web, url = start(
        [sys.executable, "-m", "kutnahora.web.cli", "--server", servers.grpc, "--port", "0", *UNLIMITED],
        r"serving (http://\S+)",
        tmp_path / "web.log",
    )
    try:
        with httpx.Client(base_url=url, timeout=20) as client:
            body = {"players": 2, "seats": ["mcts", "mcts"], "delay": 0}
            created = client.post("/api/games", json=body, headers={"origin": url})
            assert created.status_code == 200, created.text
        deadline = time.monotonic() + 30
        while not (workers := children_of(web.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert workers, "no search process was started"
        web.send_signal(signum)
        web.wait(20)
    finally:
        web.kill()
        web.wait()
    for pid in workers:
        assert gone(pid, 5), f"process {pid} outlived the web server"
