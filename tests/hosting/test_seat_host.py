"""Every seat gateway gets a socket of its own, however many seat hosts one process makes: two gateways on
one path would hand one bot the other's seat (the second bound over the first)."""

from __future__ import annotations

from pathlib import Path

from kutnahora.hosting.seat import SeatHost


def test_gateway_sockets_differ_across_seat_hosts_of_one_process(tmp_path: Path) -> None:
    hosts = [SeatHost(sandbox=None, upstream="127.0.0.1:1", sockets=tmp_path) for _ in range(3)]
    paths = [host.socket() for host in hosts for _ in range(3)]
    assert len(set(paths)) == len(paths)
    assert all(path.parent == tmp_path and len(str(path)) < 108 for path in paths)
    assert (tmp_path.stat().st_mode & 0o777) == 0o711
