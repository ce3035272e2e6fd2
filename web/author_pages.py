"""The author's area of the arena pages: a bot's author, with its API key, sees and runs its hosted code.

The author gives the bot's API key once (a form; the arena says which bot it is); the key is then kept
in this browser's cookie only (:mod:`.author_key`) and sent to the arena with each of these pages' calls
(:class:`~kutnahora.clients.arena_client.ArenaClient`). What only the author may see (the versions, build
logs and seat logs) is asked of the arena with that key, so the arena decides what it shows: another
bot's game has no log here, as it has none for that key. A refused key (wrong, rotated or revoked) is
said so, and forgotten.

==========================================  ============================================================
``GET /arena/author[?bot=NAME]``            the key form; with a key, the bot's versions, hosting state,
                                            rating plot, recent games and the upload form
``POST /arena/author/key``                  give the bot's key (checked with the arena, which names its bot)
``POST /arena/author/forget``               forget them
``POST /arena/author/hosting``              pause (``paused=true``) or resume (``false``) hosted play
``POST /arena/author/upload``               a new version: a ``.tar.gz`` (multipart ``archive``), pools
``GET /arena/author/versions/N``            version N and its build log
``GET /arena/author/games/ID``              what the bot's hosted code wrote in game ID
==========================================  ============================================================

Every POST must come from this site's own pages (:func:`~kutnahora.web.seats.same_origin`: its
``Origin``, as the rest of the site requires), besides the cookie being SameSite=Strict; every answer is
``Cache-Control: no-store``, so that no cache keeps a log or a page made with a key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import grpc
from google.protobuf import timestamp_pb2
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ClientError
from kutnahora.v1 import arena_service_pb2
from kutnahora.web import author_key, seats
from kutnahora.web.arena_pages import client, templates
from kutnahora.web.author_key import Author
from kutnahora.web.rating_plot import plot
from kutnahora.web.requests import BODY_SECONDS, HTTP_STATUS, TooLarge, bounded_body

HOME = "/arena/author"
MAX_ARCHIVE_BYTES = 4 * 1024 * 1024
"""The largest archive the arena takes (SubmitBot's 4 MiB, packed)."""
MAX_UPLOAD_BYTES = MAX_ARCHIVE_BYTES + 64 * 1024
"""The longest upload read: an archive of 4 MiB and its form's envelope (the pools, the boundaries)."""
MAX_FORM_BYTES = 4 * 1024
"""The longest body of the other forms (a key, or one switch)."""
CALL_SECONDS = 15.0
"""How long a page waits for one of the author's calls before it says the arena did not answer."""
UPLOAD_SECONDS = 60.0
"""How long an upload may take to arrive."""
STATES = {
    arena_service_pb2.SUBMISSION_STATE_BUILDING: "building",
    arena_service_pb2.SUBMISSION_STATE_READY: "ready",
    arena_service_pb2.SUBMISSION_STATE_FAILED: "failed",
}
NOT_FROM_HERE = "Refused: this request did not come from this site's own pages."


class Refusal(Exception):
    """A request this page refuses before asking the arena; the message says why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Version:
    """One row of the versions table."""

    version: int
    digest: str
    language: str
    size: str
    submitted: str
    state: str
    reason: str
    playing: bool
    games: int

    @property
    def short_digest(self) -> str:
        return self.digest[:12]


def when(stamp: timestamp_pb2.Timestamp) -> str:
    """A time as the pages write it, "" for none."""
    if stamp.seconds == 0 and stamp.nanos == 0:
        return ""
    return stamp.ToDatetime(tzinfo=UTC).strftime("%Y-%m-%d %H:%M UTC")


def size(count: int) -> str:
    """A size in bytes, for a person."""
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1024 * 1024):.2f} MiB"


def version(submission: arena_service_pb2.Submission) -> Version:
    return Version(
        submission.version,
        submission.digest,
        submission.language,
        size(submission.size_bytes),
        when(submission.submitted_at),
        STATES.get(submission.state, "unknown"),
        submission.reason,
        submission.playing,
        submission.games,
    )


def status_of(error: ClientError) -> int:
    """The HTTP status of an arena's refusal."""
    if error.code == grpc.StatusCode.UNIMPLEMENTED:
        return 501
    return HTTP_STATUS.get(error.code, 502) if error.code is not None else 502


def sentence(error: ClientError) -> str:
    """An arena's refusal as the pages say it."""
    if error.code == grpc.StatusCode.UNIMPLEMENTED:
        return "This arena does not host bots' code (it has no author's calls): ask its operator."
    return str(error)


def page(request: Request, template: str, context: dict[str, Any], status: int = 200) -> Response:
    response = templates.TemplateResponse(request, template, context, status_code=status)
    response.headers["cache-control"] = "no-store"
    return response


def key_form(request: Request, error: str = "", status: int = 200, bot: str = "") -> Response:
    """The form that asks for the bot's key (``bot``: the bot whose page led here, named above it)."""
    return page(request, "arena_author.html", {"author": None, "error": error, "bot": bot}, status)


def missing(request: Request) -> Response:
    return page(request, "arena_board.html", {"missing": True}, 503)


def home() -> Response:
    response = RedirectResponse(HOME, status_code=303)
    response.headers["cache-control"] = "no-store"
    return response


def refused_key(request: Request, author: Author, error: ClientError) -> Response:
    """The key was refused: say so, and forget it."""
    response = key_form(
        request,
        f"The arena refused the key given for {author.bot}: {error} Give the bot's current key.",
        403,
        author.bot,
    )
    author_key.forget(response, request)
    return response


async def read_form(request: Request, most: int, what: str, seconds: float) -> FormData:
    """The request's form, of at most ``most`` bytes, arrived within ``seconds``; :class:`Refusal`
    otherwise."""
    bounded = bounded_body(request, most, what)
    try:
        async with asyncio.timeout(seconds):
            return await bounded.form(max_files=1, max_fields=50)
    except TooLarge as too_large:
        raise Refusal(str(too_large), 413) from None
    except TimeoutError:
        raise Refusal(f"The form did not arrive within {seconds:g} s.", 408) from None


async def dashboard(
    request: Request, arena: ArenaClient, author: Author, notice: str = "", error: str = "", status: int = 200
) -> Response:
    """The author's page of their bot: versions, hosting, rating, games, the upload form."""
    try:
        submissions = await arena.submissions(author.key, timeout=CALL_SECONDS)
    except ClientError as refusal:
        if refusal.code == grpc.StatusCode.UNAUTHENTICATED:
            return refused_key(request, author, refusal)
        return page(
            request,
            "arena_author.html",
            {"author": author, "error": sentence(refusal), "bot": author.bot},
            status_of(refusal),
        )
    profile, profile_error = None, ""
    try:
        profile = await arena.bot_profile(author.bot)
    except ClientError as refusal:
        profile_error = str(refusal)
    try:
        pools = [p.name for p in await arena.pools()]
    except ClientError:
        pools = list(submissions.pools)
    context = {
        "author": author,
        "bot": author.bot,
        "versions": [version(s) for s in submissions.submissions],
        "hosting": submissions,
        "profile": profile,
        "profile_error": profile_error,
        "plot": plot(profile.history) if profile is not None else None,
        "pools": pools,
        "chosen_pools": set(submissions.pools),
        "notice": notice,
        "error": error,
    }
    return page(request, "arena_author.html", context, status)


Handler = Callable[[Request, ArenaClient, Author], Awaitable[Response]]


def for_author(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """A route of the author's area: a POST must come from this site's own pages; without an arena the
    page says so; without a key the visitor is sent to the key form."""

    async def route(request: Request) -> Response:
        if request.method == "POST" and not seats.same_origin(request):
            return page(request, "arena_author.html", {"author": None, "error": NOT_FROM_HERE}, 403)
        try:
            arena = await client()
        except ClientError as error:
            return page(request, "arena_author.html", {"author": None, "error": str(error)}, 503)
        if arena is None:
            return missing(request)
        author = author_key.author_of(request)
        if author is None:
            return home() if request.url.path != HOME else key_form(request, bot=_bot_asked(request))
        try:
            return await handler(request, arena, author)
        except Refusal as refusal:
            return await dashboard(request, arena, author, error=str(refusal), status=refusal.status)

    return route


def _bot_asked(request: Request) -> str:
    name = request.query_params.get("bot", "")
    return name if author_key.NAME.match(name) else ""


async def author_home(request: Request, arena: ArenaClient, author: Author) -> Response:
    return await dashboard(request, arena, author)


async def give_key(request: Request) -> Response:
    """Check the key with the arena, then keep it and the name of its bot (the arena's answer) in this
    browser's cookies."""
    if not seats.same_origin(request):
        return key_form(request, NOT_FROM_HERE, 403)
    try:
        form = await read_form(request, MAX_FORM_BYTES, "The form is too long for a key.", BODY_SECONDS)
    except Refusal as refusal:
        return key_form(request, str(refusal), refusal.status)
    key = str(form.get("key", "")).strip()
    if not author_key.KEY.match(key):
        return key_form(request, "That is not an API key: it is what RegisterBot gave, 43 characters.", 400)
    try:
        arena = await client()
        if arena is None:
            return missing(request)
        listed = await arena.submissions(key, timeout=CALL_SECONDS)
    except ClientError as error:
        if error.code == grpc.StatusCode.UNAUTHENTICATED:
            return key_form(request, f"The arena does not accept this key: {error}", 403)
        return key_form(request, sentence(error), status_of(error))
    if not author_key.NAME.match(listed.name):
        return key_form(
            request,
            "The arena did not say which bot this key is for: it is older than this site. Update the arena.",
            502,
        )
    response = home()
    author_key.remember(response, request, Author(key, listed.name))
    return response


async def forget_key(request: Request) -> Response:
    """Delete the key and the name from this browser."""
    if not seats.same_origin(request):
        return key_form(request, NOT_FROM_HERE, 403)
    response = home()
    author_key.forget(response, request)
    return response


async def set_hosting(request: Request, arena: ArenaClient, author: Author) -> Response:
    form = await read_form(request, MAX_FORM_BYTES, "The form is too long for a switch.", BODY_SECONDS)
    paused = str(form.get("paused", ""))
    if paused not in ("true", "false"):
        raise Refusal("Say whether to pause (paused=true) or to resume (paused=false).")
    try:
        await arena.set_hosting(author.key, paused=paused == "true", timeout=CALL_SECONDS)
    except ClientError as error:
        if error.code == grpc.StatusCode.UNAUTHENTICATED:
            return refused_key(request, author, error)
        return await dashboard(request, arena, author, error=sentence(error), status=status_of(error))
    return home()


async def upload(request: Request, arena: ArenaClient, author: Author) -> Response:
    """Send an uploaded archive to the arena as the bot's new version."""
    too_large = (
        f"The archive is larger than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MiB, the most the arena takes."
    )
    form = await read_form(request, MAX_UPLOAD_BYTES, too_large, UPLOAD_SECONDS)
    archive = form.get("archive")
    if not isinstance(archive, UploadFile) or not archive.filename:
        raise Refusal("Choose the archive to upload: the .tar.gz of the bot's submission folder.")
    data = await archive.read(MAX_ARCHIVE_BYTES + 1)
    if len(data) > MAX_ARCHIVE_BYTES:
        raise Refusal(too_large, 413)
    if not data:
        raise Refusal(f"{archive.filename} is empty.")
    pools = [str(p) for p in form.getlist("pools") if str(p)]
    try:
        submitted = await arena.submit_bot(author.key, data, pools, timeout=UPLOAD_SECONDS)
    except ClientError as error:
        if error.code == grpc.StatusCode.UNAUTHENTICATED:
            return refused_key(request, author, error)
        return await dashboard(request, arena, author, error=sentence(error), status=status_of(error))
    kept = version(submitted.submission)
    notice = (
        f"Version {kept.version} submitted ({kept.state})."
        if submitted.created
        else f"This archive is version {kept.version} already ({kept.state}); nothing new was kept."
    )
    return await dashboard(request, arena, author, notice=notice)


async def build_log(request: Request, arena: ArenaClient, author: Author) -> Response:
    number = request.path_params["version"]
    if not 1 <= number < 2**31:
        return page(
            request,
            "arena_author_log.html",
            {"error": f"{author.bot} has no version {number}.", "bot": author.bot},
            404,
        )
    try:
        found = await arena.submission(author.key, number, timeout=CALL_SECONDS)
    except ClientError as error:
        if error.code == grpc.StatusCode.UNAUTHENTICATED:
            return refused_key(request, author, error)
        return page(
            request, "arena_author_log.html", {"error": sentence(error), "bot": author.bot}, status_of(error)
        )
    shown = {"bot": author.bot, "version": version(found.submission), "log": found.build_log}
    return page(request, "arena_author_log.html", shown)


async def seat_log(request: Request, arena: ArenaClient, author: Author) -> Response:
    game_id = request.path_params["game_id"]
    if not seats.GAME_ID.match(game_id):
        context = {"error": "There is no such game: a game id is letters and digits.", "bot": author.bot}
        return page(request, "arena_author_log.html", context, 404)
    try:
        found = await arena.seat_log(author.key, game_id, timeout=CALL_SECONDS)
    except ClientError as error:
        if error.code == grpc.StatusCode.UNAUTHENTICATED:
            return refused_key(request, author, error)
        context = {"error": sentence(error), "bot": author.bot, "game_id": game_id}
        return page(request, "arena_author_log.html", context, status_of(error))
    return page(request, "arena_author_log.html", {"bot": author.bot, "seat": found, "log": found.log})


def routes() -> list[Route]:
    """The author's area's routes, for the web application's route list."""
    return [
        Route(HOME, for_author(author_home)),
        Route(f"{HOME}/key", give_key, methods=["POST"]),
        Route(f"{HOME}/forget", forget_key, methods=["POST"]),
        Route(f"{HOME}/hosting", for_author(set_hosting), methods=["POST"]),
        Route(f"{HOME}/upload", for_author(upload), methods=["POST"]),
        Route(f"{HOME}/versions/{{version:int}}", for_author(build_log)),
        Route(f"{HOME}/games/{{game_id}}", for_author(seat_log)),
    ]
