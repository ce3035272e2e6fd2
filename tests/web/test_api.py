"""The web server's API without a browser: cross-site requests refused, clear errors, seats in cookies."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.web.conftest import Servers
from tests.web.http_wire import read_answer


@pytest.fixture
def web(servers: Servers) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=servers.web, timeout=20) as client:
        yield client


def same_site(servers: Servers) -> dict[str, str]:
    return {"origin": servers.web}


def game_count(web: httpx.Client) -> int:
    return len(web.get("/api/games").json()["games"])


@pytest.mark.parametrize(
    "headers",
    [{"origin": "http://evil.example"}, {"origin": "null"}, {}, {"sec-fetch-site": "cross-site"}],
    ids=["other-site", "opaque-origin", "no-origin", "cross-site-fetch"],
)
def test_a_cross_site_request_changes_nothing(
    servers: Servers, web: httpx.Client, headers: dict[str, str]
) -> None:
    before = game_count(web)
    body = {"players": 2, "seats": ["greedy", "greedy"], "delay": 0}
    answer = web.post("/api/games", json=body, headers=headers)
    assert answer.status_code == 403
    assert answer.json()["error"] == "Refused: this request did not come from this site's own pages."
    assert game_count(web) == before


def test_bad_requests_are_refused_with_a_sentence(servers: Servers, web: httpx.Client) -> None:
    headers = same_site(servers)
    answer = web.post("/api/games", json={"players": 5, "seats": []}, headers=headers)
    assert (
        answer.status_code == 400
        and answer.json()["error"] == "'players' must be a whole number from 2 to 4."
    )
    answer = web.post("/api/games", json={"players": 2, "seats": ["you", "you"]}, headers=headers)
    assert answer.json()["error"] == "You can take only one seat of a game."
    answer = web.post("/api/games", json={"players": 2, "seats": ["you", "chess"]}, headers=headers)
    assert answer.status_code == 400 and "'seats' must name each of the 2 seats" in answer.json()["error"]
    before = game_count(web)
    for costly in ("neural-mcts", "neural-mcts:100000", "mcts:100000", "neural:5000"):
        # bots a visitor may not seat: they would search in the web server's own process
        answer = web.post("/api/games", json={"players": 2, "seats": ["you", costly]}, headers=headers)
        assert answer.status_code == 400 and "'seats' must name each" in answer.json()["error"]
    assert game_count(web) == before
    answer = web.post("/api/games", content=b"{not json", headers=headers)
    assert answer.json()["error"] == "The request body is not JSON."
    answer = web.get("/api/games/0123456789abcdef")
    assert answer.status_code == 404 and "0123456789abcdef" in answer.json()["error"]


def test_a_seat_lives_in_an_http_only_cookie_and_nothing_else(servers: Servers, web: httpx.Client) -> None:
    headers = same_site(servers)
    created = web.post("/api/games", json={"players": 2, "seats": ["you", "open"]}, headers=headers)
    assert created.status_code == 200
    game_id = created.json()["game_id"]
    cookie = created.headers["set-cookie"]
    assert cookie.startswith(f"kh_seat_{game_id}=0.")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    token = cookie.split(";", 1)[0].split(".", 1)[1]
    assert token not in created.text
    assert web.get(f"/api/games/{game_id}").json()["seat"] == 0

    # Another browser joins the open seat; the game starts. A browser without a seat cannot decide.
    other = httpx.Client(base_url=servers.web, timeout=20)
    joined = other.post(f"/api/games/{game_id}/join", json={"name": "Bob"}, headers=headers)
    assert joined.json() == {"game_id": game_id, "seat": 1}
    again = other.post(f"/api/games/{game_id}/join", json={"name": "Bob"}, headers=headers)
    assert again.status_code == 400
    assert again.json()["error"] == "This browser already holds seat 1 of this game."
    with httpx.Client(base_url=servers.web, timeout=20) as stranger:
        refused = stranger.post(
            f"/api/games/{game_id}/decide", json={"version": 0, "index": 0}, headers=headers
        )
        assert refused.status_code == 400
        assert refused.json()["error"] == "This browser holds no seat in this game."
    first = web.get(f"/api/games/{game_id}").json()["game"]["pending_seat"]
    deciding, waiting = (web, other) if first == 0 else (other, web)
    # Not this seat's turn, or a stale version: refused, and nothing is applied.
    early = waiting.post(f"/api/games/{game_id}/decide", json={"version": 0, "index": 0}, headers=headers)
    assert early.status_code == 409 and early.json()["error"] == "It is not your turn."
    stale = deciding.post(f"/api/games/{game_id}/decide", json={"version": 5, "index": 0}, headers=headers)
    assert stale.status_code == 409
    assert stale.json()["error"] == "The game has moved on to version 0; choose again."
    assert web.get(f"/api/games/{game_id}").json()["game"]["version"] == 0
    applied = deciding.post(f"/api/games/{game_id}/decide", json={"version": 0, "index": 0}, headers=headers)
    assert applied.json() == {"version": 1, "game_over": False}
    # Resigning hands the seat to the server's random policy.
    resigned = deciding.post(f"/api/games/{game_id}/resign", json={}, headers=headers)
    assert resigned.json()["game"]["seats"][first]["resigned"] is True
    twice = deciding.post(f"/api/games/{game_id}/resign", json={}, headers=headers)
    assert twice.status_code == 409
    assert twice.json()["error"] == f"You have already resigned seat {first}; the server plays it to the end."
    other.close()
    # A forged cookie is the game server's to refuse.
    web.cookies.set(f"kh_seat_{game_id}", "1.not-the-real-token-at-all", path="/")
    forged = web.post(f"/api/games/{game_id}/decide", json={"version": 1, "index": 0}, headers=headers)
    assert "not-the-real-token" not in forged.text
    assert forged.status_code == 403
    assert token not in servers.web_log.read_text(errors="replace")


def test_every_answer_forbids_scripts_from_elsewhere(web: httpx.Client) -> None:
    for path in ("/", "/api/games", "/static/game.js", "/tournament"):
        answer = web.get(path)
        assert answer.status_code == 200, path
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        assert answer.headers["x-frame-options"] == "DENY"


def test_an_upload_that_is_not_a_results_file_is_refused(servers: Servers, web: httpx.Client) -> None:
    files = {"results": ("notes.json", b'{"format": "other"}', "application/json")}
    answer = web.post("/tournament", files=files, headers=same_site(servers))
    assert answer.status_code == 400
    assert "notes.json cannot be read: it is not a kutnahora-tournament/1 results file." in answer.text
    answer = web.post("/tournament", files={"results": ("x.json", b"{oops", "application/json")})
    assert answer.status_code == 403


def test_an_unknown_game_is_a_404_page(web: httpx.Client) -> None:
    missing = web.get("/games/0123456789abcdef")
    assert missing.status_code == 404
    assert "No such game" in missing.text and "has no game 0123456789abcdef" in missing.text
    odd = web.get("/games/not..an..id")
    assert odd.status_code == 404 and "a game id is letters and digits" in odd.text


def test_an_mcts_seat_plays_from_the_lobby(servers: Servers, web: httpx.Client) -> None:
    lobby = web.get("/static/lobby.js").text
    assert '"greedy", "mcts"' in lobby
    body = {"players": 2, "seats": ["mcts", "greedy"], "delay": 0, "seed": 3}
    created = web.post("/api/games", json=body, headers=same_site(servers))
    assert created.status_code == 200, created.text
    game_id = created.json()["game_id"]
    deadline = time.monotonic() + 90
    game = web.get(f"/api/games/{game_id}").json()["game"]
    while game["version"] < 6 and time.monotonic() < deadline:
        time.sleep(0.5)
        game = web.get(f"/api/games/{game_id}").json()["game"]
    assert game["version"] >= 6 and game["status"] == "active"
    assert [seat["name"] for seat in game["seats"]] == ["mcts", "greedy"]
    # While it searches the web server answers the lobby (its search runs in another process).
    assert web.get("/api/games").status_code == 200


def raw_post(servers: Servers, path: str, head: dict[str, str], *body: bytes) -> tuple[int, str]:
    """POST over a bare socket, sending only the ``body`` pieces whatever Content-Length says (and no more
    once the server has stopped reading); the status and body of the answer, read without sending more."""
    url = httpx.URL(servers.web)
    with socket.create_connection((url.host, url.port or 80), timeout=20) as sock:
        lines = [f"POST {path} HTTP/1.1", f"Host: {url.host}:{url.port}", f"Origin: {servers.web}"]
        lines += [f"{name}: {value}" for name, value in head.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        for piece in body:
            try:
                sock.sendall(piece)
            except OSError:  # answered and closed before the rest was taken
                break
        status, _, payload = read_answer(sock)
    return int(status.split()[1]), payload.decode()


def test_a_body_announced_longer_than_the_bound_is_refused_before_it_is_sent(servers: Servers) -> None:
    """Content-Length of a gigabyte, 1 KB sent: the answer (413, a sentence) comes without the rest."""
    head = {"Content-Type": "application/json", "Content-Length": str(1 << 30)}
    status, payload = raw_post(servers, "/api/games", head, b"{" + b" " * 1023)
    assert status == 413
    assert json.loads(payload)["error"] == (
        "The request body is longer than 16,384 bytes; this API takes short JSON."
    )


def test_a_chunked_body_is_read_no_further_than_the_bound(servers: Servers) -> None:
    """No Content-Length, chunks streamed past the bound and the stream never ended: 413 all the same."""
    chunk = b" " * 8192
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(3))  # 24 KB, no last chunk
    head = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    status, payload = raw_post(servers, "/api/games", head, chunks)
    assert status == 413 and "longer than 16,384 bytes" in json.loads(payload)["error"]


def test_json_nested_past_the_parsers_depth_is_a_bad_request_not_a_failure(
    servers: Servers, web: httpx.Client
) -> None:
    before = game_count(web)
    for body in (b"[" * 5_000 + b"]" * 5_000, b'{"players": ' + b"[" * 8_000 + b"]" * 8_000 + b"}"):
        answer = web.post(
            "/api/games", content=body, headers={**same_site(servers), "content-type": "application/json"}
        )
        assert answer.status_code == 400 and answer.json()["error"] == "The request body is not JSON."
    assert game_count(web) == before


def test_a_body_that_trickles_is_answered_after_the_bound_on_waiting(servers: Servers) -> None:
    """Content-Length 100, 10 bytes sent, then nothing: 408 with a sentence once BODY_SECONDS have passed,
    not a connection held for as long as the client likes."""
    head = {"Content-Type": "application/json", "Content-Length": "100"}
    started = time.monotonic()
    status, payload = raw_post(servers, "/api/games", head, b'{"players"')
    assert status == 408 and json.loads(payload)["error"] == "The request body did not arrive within 5 s."
    assert time.monotonic() - started < 15


MULTIPART = "multipart/form-data; boundary=xyz"
PART = b'--xyz\r\nContent-Disposition: form-data; name="results"; filename="r.json"\r\n\r\n'


def test_an_upload_announced_past_the_bound_is_refused_before_it_is_sent(servers: Servers) -> None:
    head = {"Content-Type": MULTIPART, "Content-Length": str(1 << 34)}  # 16 GiB announced
    status, payload = raw_post(servers, "/tournament", head, PART + b" " * 1024)
    assert status == 413 and "The results file is larger than 16 MiB." in payload


def test_a_chunked_upload_is_read_no_further_than_the_bound(servers: Servers) -> None:
    """18 MiB streamed in chunks with no end announced: refused once 17 MiB have come, not spooled on."""
    mib = b" " * (1 << 20)
    chunk = b"%x\r\n%s\r\n" % (len(mib), mib)
    head = {"Content-Type": MULTIPART, "Transfer-Encoding": "chunked"}
    first = b"%x\r\n%s\r\n" % (len(PART), PART)
    status, payload = raw_post(servers, "/tournament", head, first, *[chunk] * 18)
    assert status == 413 and "The results file is larger than 16 MiB." in payload


def test_a_results_file_nested_past_the_parsers_depth_is_not_json(
    servers: Servers, web: httpx.Client
) -> None:
    files = {"results": ("deep.json", b"[" * 50_000 + b"]" * 50_000, "application/json")}
    answer = web.post("/tournament", files=files, headers=same_site(servers))
    assert answer.status_code == 400 and "deep.json is not JSON." in answer.text
