"""The author's area of the web's arena pages: the key kept in an HttpOnly cookie and never shown, the
bot's versions and build logs, pausing and resuming, uploads, the rating plot, the seat logs, and the
hosted marks on the leaderboard and the bot's page.

The public calls (pools, leaderboard, profiles) are a real arena's, with rated games in its store; the
author's calls are :class:`tests.web.fake_arena.FakeArena`'s, which checks the key each call carries.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from kutnahora.arena.app import Arena
from kutnahora.arena.ratings import rate
from kutnahora.hosting.archives import pack
from kutnahora.plumbing import auth
from kutnahora.web import arena_pages, author_key, author_pages
from tests.web.fake_arena import FakeArena

ACE_KEY = "ace-key-" + "a" * 35
BEE_KEY = "bee-key-" + "b" * 35
ORIGIN = {"origin": "http://test"}


@dataclass
class Site:
    fake: FakeArena
    web: httpx.AsyncClient
    pages: list[str]  # every page the web answered, to look for the key in

    async def get(self, path: str, status: int = 200) -> httpx.Response:
        response = await self.web.get(path)
        assert response.status_code == status, (path, response.status_code, response.text[-2000:])
        self.pages.append(response.text)
        return response

    async def post(self, path: str, status: int, **kwargs: object) -> httpx.Response:
        headers = kwargs.pop("headers", ORIGIN)
        response = await self.web.post(path, headers=headers, **kwargs)  # type: ignore[arg-type]
        assert response.status_code == status, (path, response.status_code, response.text[-2000:])
        self.pages.append(response.text + str(response.headers.get("location", "")))
        return response

    async def give_key(self, key: str = ACE_KEY) -> None:
        given = await self.post("/arena/author/key", 303, data={"key": key})
        assert given.headers["location"] == "/arena/author"


@pytest.fixture
def fake(arena: Arena) -> Iterator[FakeArena]:
    arena_fake = FakeArena(f"127.0.0.1:{arena.port}")
    arena_fake.add_bot("ace", ACE_KEY)
    arena_fake.add_bot("bee", BEE_KEY)
    yield arena_fake


@pytest.fixture
async def site(arena: Arena, fake: FakeArena, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Site]:
    store = arena.store
    ids = [
        (await store.register(name, auth.token_hash(key))).account_id
        for name, key in (("ace", ACE_KEY), ("bee", BEE_KEY))
    ]
    await store.record_game("long-game", "2", "127.0.0.1:1", ids)  # still in play
    for number, places in enumerate(([1, 2], [2, 1], [1, 2])):
        await store.record_game(f"game{number}", "2", "127.0.0.1:1", ids)
        await store.rate_game(f"game{number}", "2", ids, places, lambda b, p=places: rate(b, p))
    with fake.serve() as address:
        monkeypatch.setenv(arena_pages.ENV_ARENA, address)
        app = Starlette(routes=[*arena_pages.routes(), *author_pages.routes()])
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as web:
                yield Site(fake, web, [])
        finally:
            for client in arena_pages._clients.values():
                await client.close()
            arena_pages._clients.clear()


def archive(folder: Path, name: str = "ace", body: str = "print('hello')\n") -> bytes:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kutnahora-bot.toml").write_text(
        f'name = "{name}"\nlanguage = "python"\nrun = "python3 bot.py"\n', encoding="utf-8"
    )
    (folder / "bot.py").write_text(body, encoding="utf-8")
    return pack(folder)


def keys_sent(fake: FakeArena, rpc: str) -> list[str | None]:
    return [key for name, key in fake.calls if name == rpc]


async def test_the_key_is_kept_in_an_httponly_cookie_and_never_shown(site: Site) -> None:
    form = await site.get("/arena/author?bot=ace")
    assert 'id="key-form"' in form.text and "The key of ace" in form.text, "the bot that led here named"
    assert 'name="bot"' not in form.text, "the key alone: the arena names its bot"
    assert "docs/hosted-bots.md" in form.text
    assert form.headers["cache-control"] == "no-store"
    refused = await site.post("/arena/author/key", 403, data={"key": ACE_KEY}, headers={})
    assert "did not come from this site" in refused.text and "set-cookie" not in refused.headers
    given = await site.post("/arena/author/key", 303, data={"key": ACE_KEY})
    cookies = given.headers.get_list("set-cookie")
    key_cookie = next(c for c in cookies if c.startswith(f"{author_key.KEY_COOKIE}="))
    assert key_cookie.startswith(f"{author_key.KEY_COOKIE}={ACE_KEY};")
    attributes = {part.strip().split("=")[0].lower() for part in key_cookie.split(";")[1:]}
    assert {"httponly", "path", "samesite"} <= attributes and "max-age" not in attributes
    assert "samesite=strict" in key_cookie.lower() and "path=/arena" in key_cookie.lower()
    assert "secure" not in attributes, "Secure only over HTTPS"
    assert keys_sent(site.fake, "ListSubmissions") == [ACE_KEY], "the key checked with the arena first"
    page = await site.get("/arena/author")
    assert "Author's area: ace" in page.text and 'id="forget"' in page.text
    assert keys_sent(site.fake, "ListSubmissions")[-1] == ACE_KEY
    assert "No version uploaded yet" in page.text
    # Forgetting deletes both cookies; the form is shown again.
    forgotten = await site.post("/arena/author/forget", 303)
    deleted = forgotten.headers.get_list("set-cookie")
    assert len(deleted) == 2 and all("max-age=0" in c.lower() for c in deleted)
    again = await site.get("/arena/author")
    assert 'id="key-form"' in again.text
    assert not any(ACE_KEY in text for text in site.pages), "the key is in no page and no address"


async def test_over_https_the_cookie_is_secure(site: Site) -> None:
    transport = httpx.ASGITransport(app=Starlette(routes=author_pages.routes()))
    async with httpx.AsyncClient(transport=transport, base_url="https://test") as web:
        given = await web.post("/arena/author/key", data={"key": ACE_KEY}, headers={"origin": "https://test"})
    assert given.status_code == 303
    assert all("; secure" in c.lower() for c in given.headers.get_list("set-cookie"))


async def test_a_wrong_or_revoked_key_is_said_so(site: Site) -> None:
    wrong = await site.post("/arena/author/key", 403, data={"key": "not-a-key-" + "x" * 33})
    assert "does not accept this key" in wrong.text and "not one the arena knows" in wrong.text
    assert "set-cookie" not in wrong.headers
    malformed = await site.post("/arena/author/key", 400, data={"key": "short"})
    assert "That is not an API key" in malformed.text
    # A name sent beside the key (by a page from before) changes nothing: the arena names the key's bot.
    other = await site.post("/arena/author/key", 303, data={"bot": "bee", "key": ACE_KEY})
    named = [c for c in other.headers.get_list("set-cookie") if c.startswith(f"{author_key.BOT_COOKIE}=")]
    assert len(named) == 1 and named[0].startswith(f"{author_key.BOT_COOKIE}=ace;")
    assert "Author's area: ace" in (await site.get("/arena/author")).text
    await site.give_key()
    site.fake.revoke("ace")
    page = await site.get("/arena/author", 403)
    assert "refused the key given for ace" in page.text and "was revoked" in page.text
    assert 'id="key-form"' in page.text
    cleared = page.headers.get_list("set-cookie")
    assert len(cleared) == 2 and all("max-age=0" in c.lower() for c in cleared), "the refused key forgotten"
    assert not any(ACE_KEY in text for text in site.pages)


async def test_uploads_versions_and_build_logs(site: Site, tmp_path: Path) -> None:
    await site.give_key()
    first = archive(tmp_path / "one")
    sent = await site.post(
        "/arena/author/upload",
        200,
        files={"archive": ("ace.tar.gz", first, "application/gzip")},
        data={"pools": ["2", "4"]},
    )
    assert "Version 1 submitted (building)." in sent.text
    assert keys_sent(site.fake, "SubmitBot") == [ACE_KEY]
    kept = site.fake.bots["ace"].versions[0]
    assert kept.archive == first, "the file's bytes, as uploaded"
    assert site.fake.bots["ace"].pools == ["2", "4"]
    site.fake.built("ace", 1, ok=True, log="pip install: done <ok>\n")
    second = archive(tmp_path / "two", body="print('better')\n")
    await site.post(
        "/arena/author/upload",
        200,
        files={"archive": ("ace.tar.gz", second, "application/gzip")},
        data={"pools": ["2", "4"]},
    )
    site.fake.built("ace", 2, ok=False, log="error: <missing> module\n", reason="the build failed (exit 1)")
    page = await site.get("/arena/author")
    rows = re.findall(r'<tr data-version="(\d+)">(.*?)</tr>', page.text, re.S)
    assert [number for number, _ in rows] == ["2", "1"], "newest first"
    two, one = (row for _, row in rows)
    assert "failed" in two and "the build failed (exit 1)" in two and "playing" not in two
    assert "ready" in one and "playing" in one and "python" in one
    assert f">{kept.submission.digest[:12]}</code>" in one, "the digest, short"
    assert "Version 1 plays" in page.text and "pools 2, 4" in page.text
    log = await site.get("/arena/author/versions/2")
    assert "error: &lt;missing&gt; module" in log.text and "the build failed (exit 1)" in log.text
    assert keys_sent(site.fake, "GetSubmission") == [ACE_KEY]
    await site.get("/arena/author/versions/9", 404)
    # The same archive again is that version; a manifest of another bot is refused with its sentence.
    same = await site.post(
        "/arena/author/upload", 200, files={"archive": ("a.tar.gz", first, "application/gzip")}
    )
    assert "This archive is version 1 already (ready)" in same.text
    other = archive(tmp_path / "bee", name="bee")
    refused = await site.post(
        "/arena/author/upload", 400, files={"archive": ("b.tar.gz", other, "application/gzip")}
    )
    assert "the manifest names the bot &#39;bee&#39;" in refused.text
    not_tar = await site.post(
        "/arena/author/upload", 400, files={"archive": ("x.tar.gz", b"plain", "text/plain")}
    )
    assert "the archive cannot be read" in not_tar.text
    assert len(site.fake.bots["ace"].versions) == 2, "refused uploads keep nothing"


async def test_an_upload_too_large_is_refused_before_the_arena(site: Site) -> None:
    await site.give_key()
    calls = len(site.fake.calls)
    big = b"\x1f\x8b" + b"0" * (author_pages.MAX_ARCHIVE_BYTES + 10)
    page = await site.post(
        "/arena/author/upload", 413, files={"archive": ("big.tar.gz", big, "application/gzip")}
    )
    assert "larger than 4 MiB" in page.text
    # Without a Content-Length (sent in chunks), it is refused once more than the bound has come.
    boundary = "kutnahora-test-boundary"
    envelope = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="archive"; filename="big.tar.gz"\r\n'
        "Content-Type: application/gzip\r\n\r\n"
    ).encode()

    async def chunks() -> AsyncIterator[bytes]:
        yield envelope
        for _ in range(5):
            yield b"0" * (1024 * 1024)
        yield f"\r\n--{boundary}--\r\n".encode()

    chunked = await site.post(
        "/arena/author/upload",
        413,
        content=chunks(),
        headers={**ORIGIN, "content-type": f"multipart/form-data; boundary={boundary}"},
    )
    assert "content-length" not in chunked.request.headers and "larger than 4 MiB" in chunked.text
    assert "SubmitBot" not in [name for name, _ in site.fake.calls[calls:]]
    empty = await site.post("/arena/author/upload", 400, files={"archive": ("", b"", "application/gzip")})
    assert "Choose the archive" in empty.text


async def test_the_daily_allowance_is_the_arenas_sentence(site: Site, tmp_path: Path) -> None:
    site.fake.submissions_per_day = 1
    await site.give_key()
    await site.post(
        "/arena/author/upload", 200, files={"archive": ("a.tar.gz", archive(tmp_path / "a"), "x")}
    )
    second = archive(tmp_path / "b", body="pass\n")
    page = await site.post("/arena/author/upload", 429, files={"archive": ("b.tar.gz", second, "x")})
    assert "its daily allowance" in page.text


async def test_pause_and_resume(site: Site, tmp_path: Path) -> None:
    await site.give_key()
    await site.post(
        "/arena/author/upload", 200, files={"archive": ("a.tar.gz", archive(tmp_path / "a"), "x")}
    )
    site.fake.built("ace", 1, ok=True, log="")
    page = await site.get("/arena/author")
    assert 'id="pause"' in page.text and 'id="resume"' not in page.text
    elsewhere = await site.post(
        "/arena/author/hosting", 403, data={"paused": "true"}, headers={"origin": "http://evil"}
    )
    assert "did not come from this site" in elsewhere.text and not site.fake.bots["ace"].paused
    await site.post("/arena/author/hosting", 303, data={"paused": "true"})
    assert site.fake.bots["ace"].paused and keys_sent(site.fake, "SetHosting") == [ACE_KEY]
    paused = await site.get("/arena/author")
    assert "Paused: paused by its author." in paused.text and 'id="resume"' in paused.text
    await site.post("/arena/author/hosting", 303, data={"paused": "false"})
    assert not site.fake.bots["ace"].paused
    site.fake.pause_after_failures("ace", "made no decision for 60 s")
    failing = await site.get("/arena/author")
    assert "paused after 3 failures in a row; the last: made no decision for 60 s" in failing.text
    bad = await site.post("/arena/author/hosting", 400, data={"paused": "maybe"})
    assert "Say whether to pause" in bad.text


async def test_the_rating_plot_has_every_point(site: Site) -> None:
    await site.give_key()
    page = await site.get("/arena/author")
    profile = await arena_pages._clients[next(iter(arena_pages._clients))].bot_profile("ace")
    history = [f"{p.mu:.2f}" for p in profile.history]
    assert len(history) == 3
    svg = page.text.split('<svg id="rating-chart"', 1)[1].split("</svg>", 1)[0]
    assert re.findall(r'data-mu="([\d.]+)"', svg) == history
    assert "<title" in svg and "<desc" in svg and "pool 2: 3 rated games" in svg
    assert len(re.findall(r"<polyline", svg)) == 1
    numbers = page.text.split('id="rating-numbers"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r"<tr><td>\d+</td>", numbers) == [f"<tr><td>{n}</td>" for n in (1, 2, 3)]
    assert all(mu in numbers for mu in history)


async def test_seat_logs_are_the_bots_own(site: Site) -> None:
    site.fake.seat_played("ace", "game1", 0, "thinking… <move 3>\n", outcome="finished")
    site.fake.seat_played("bee", "game0", 1, "bee's secret plan\n")
    await site.give_key()
    page = await site.get("/arena/author")
    games = re.findall(r'<tr data-game-id="([^"]+)">', page.text)
    assert games == ["long-game", "game2", "game1", "game0"]
    assert 'href="/games/game1"' in page.text and 'href="/arena/author/games/game1"' in page.text
    assert 'href="/arena/author/games/long-game"' not in page.text, "a game in play has no log yet"
    log = await site.get("/arena/author/games/game1")
    assert "thinking… &lt;move 3&gt;" in log.text and "Seat 0, played by version 0: finished." in log.text
    other = await site.get("/arena/author/games/game0", 404)
    assert "has no log of a game &#39;game0&#39;" in other.text and "secret plan" not in other.text
    assert keys_sent(site.fake, "GetSeatLog") == [ACE_KEY, ACE_KEY]
    await site.get("/arena/author/games/bad%20id", 404)
    assert keys_sent(site.fake, "GetSeatLog") == [ACE_KEY, ACE_KEY], "a malformed id is not asked for"


async def test_hosted_bots_are_marked(site: Site, tmp_path: Path) -> None:
    board = await site.get("/arena?pool=2")
    assert 'class="hosted"' not in board.text
    assert 'href="/arena/author"' in board.text
    bot = await site.get("/arena/bots/ace")
    assert 'href="/arena/author?bot=ace"' in bot.text and 'class="hosted"' not in bot.text
    await site.give_key()
    for number in (1, 2):
        made = archive(tmp_path / str(number), body=f"# {number}\n")
        await site.post("/arena/author/upload", 200, files={"archive": ("a.tar.gz", made, "x")})
        site.fake.built("ace", number, ok=True, log="")
    board = await site.get("/arena?pool=2")
    rows = re.findall(r"<tr><td>\d+</td>(.*?)</tr>", board.text, re.S)
    marks = {re.search(r">(\w+)</a>", row).group(1): "hosted v2" in row for row in rows}  # type: ignore[union-attr]
    assert marks == {"ace": True, "bee": False}
    bot = await site.get("/arena/bots/ace")
    assert '<small class="hosted">hosted v2</small>' in bot.text


async def test_without_a_key_the_authors_pages_lead_to_the_form(site: Site) -> None:
    for path in ("/arena/author/versions/1", "/arena/author/games/game0"):
        response = await site.web.get(path)
        assert response.status_code == 303 and response.headers["location"] == "/arena/author"
    upload = await site.web.post("/arena/author/upload", headers=ORIGIN, files={"archive": ("a", b"x", "x")})
    assert upload.status_code == 303
    assert not keys_sent(site.fake, "SubmitBot") and not keys_sent(site.fake, "GetSeatLog")
