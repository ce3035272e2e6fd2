"""Sandbox user ids are leased: two runners on one host never give one user id to two bots at once.

A unit test of the leases (a user id held by one process is not handed to another, and is free again the
moment its holder is killed), then two tournaments run at once on one runtime folder: in the first, a
``holder`` bot keeps as many processes as its limit allows while it plays; in the second, ``witness``
bots only play. Every hosted bot prints its user id when it starts and ends; no two of those spans with
one user id overlap, and the second tournament's bots never fail.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kutnahora.hosting.leases import UidLeases
from tests.clients.helpers import ROOT

WALLS = ROOT / "tests" / "clients" / "walls"

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="sandbox user ids are leased only by a root runner")


def test_a_held_user_id_is_not_handed_out_again_and_comes_back_when_its_holder_dies(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from kutnahora.hosting.leases import UidLeases\n"
            "lease = UidLeases(70000, 3, Path(sys.argv[1])).acquire()\n"
            "print(lease.uid, flush=True)\n"
            "time.sleep(60)\n",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        held = int(holder.stdout.readline())
        assert held == 70000
        leases = UidLeases(70000, 3, tmp_path)
        mine = [leases.acquire(), leases.acquire()]
        assert sorted(lease.uid for lease in mine) == [70001, 70002]
        with pytest.raises(Exception, match="all 3 sandbox user ids"):
            leases.acquire()
        mine[0].release()
        assert leases.acquire().uid == 70001  # released: free again
        holder.send_signal(signal.SIGKILL)  # a runner that dies holds nothing
        holder.wait(10)
        assert leases.acquire().uid == 70000
    finally:
        holder.kill()
        holder.wait(10)


def spans(logs: Path, results: dict[str, object]) -> list[tuple[int, float, float, str]]:
    """(uid, start, end, which) of every hosted bot run whose log says so."""
    found = []
    for game in results["games"]:  # type: ignore[attr-defined]
        for seat, _ in enumerate(game["bots"]):
            path = logs / f"{game['game_id']}-seat{seat}.log"
            if not path.exists():
                continue
            lines = path.read_text(errors="replace").splitlines()
            starts = [line.split() for line in lines if line.startswith("uid ") and " start " in line]
            ends = [line.split() for line in lines if line.startswith("uid ") and " end " in line]
            if starts:
                end = float(ends[-1][3]) if ends else time.time()
                found.append((int(starts[0][1]), float(starts[0][3]), end, str(path)))
    return found


@needs_root
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_two_tournaments_at_once_never_share_a_user_id(tmp_path: Path) -> None:
    runtime = tmp_path / "leases"

    def start(name: str, bots: list[str]) -> tuple[subprocess.Popen[str], Path]:
        submissions = tmp_path / name / "submissions"
        for bot in bots:
            shutil.copytree(WALLS / bot, submissions / bot)
        out = tmp_path / name / "results.json"
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "kutnahora.clients.tournament.cli"),
                *("--submissions", str(submissions), "--bots", "greedy", "--players", "2", "--games", "6"),
                *("--concurrency", "3", "--bot-processes", "48", "--move-timeout", "30"),
                *("--sandbox-runtime", str(runtime), "--out", str(out), "--quiet"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        return process, out

    first, first_out = start("first", ["holder"])
    second, second_out = start("second", ["witness"])
    first_text = first.communicate(timeout=400)[0]
    second_text = second.communicate(timeout=400)[0]
    assert second.returncode == 0, second_text
    assert first.returncode == 0, first_text
    first_results = json.loads(first_out.read_text())
    second_results = json.loads(second_out.read_text())
    holder_log = "\n".join(p.read_text() for p in (tmp_path / "first" / "results.logs").glob("*.log"))
    assert "holding" in holder_log and "while it plays" in holder_log  # it did hold its processes
    held = int(holder_log.split("holding ")[1].split()[0])
    assert held >= 20
    assert [f for g in second_results["games"] for f in g["failures"]] == []  # the innocent never fail
    runs = spans(tmp_path / "first" / "results.logs", first_results)
    runs += spans(tmp_path / "second" / "results.logs", second_results)
    assert len(runs) >= 10 and len({which for *_, which in runs}) == len(runs)
    for index, (uid, start, end, which) in enumerate(runs):
        for other_uid, other_start, other_end, other in runs[index + 1 :]:
            if uid == other_uid:
                assert end <= other_start or other_end <= start, f"{which} and {other} shared user {uid}"
    assert any(uid != runs[0][0] for uid, *_ in runs)
