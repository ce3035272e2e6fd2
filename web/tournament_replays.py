"""The tournament page and its uploads, and the replays of tournament games: a game the game server no
longer has is played again there from its saved file, once, as a creation of the visitor who asks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from kutnahora.clients.sdk import Client, ClientError
from kutnahora.clients.tournament.results import FORMAT, GameRecord
from kutnahora.web import replays, seats
from kutnahora.web.api import reserve_game
from kutnahora.web.limits import Refused
from kutnahora.web.pages import templates
from kutnahora.web.replays import ReplayError, replay_onto
from kutnahora.web.requests import TooLarge, bounded_body, visitor
from kutnahora.web.standings import ResultsError, Tournament, from_records
from kutnahora.web.state import Web

MAX_UPLOAD_BYTES = 17 * 1024 * 1024
"""The longest upload of the tournament page read: a results file of 16 MiB and its form's envelope."""


async def tournament_page(request: Request) -> Response:
    web: Web = request.app.state.web
    error = ""
    shown = web.tournament
    if request.method == "POST":
        if not seats.same_origin(request):
            return Response("Refused: this request did not come from this site's own pages.", status_code=403)
        status = 400
        try:
            upload_body = bounded_body(request, MAX_UPLOAD_BYTES, "The results file is larger than 16 MiB.")
            async with upload_body.form(max_files=1) as form:
                upload = form.get("results")
                if not isinstance(upload, UploadFile):
                    error = "Choose a results file (results.json) to upload."
                else:
                    shown, error = await _read_upload(upload)
                    shown = shown or web.tournament
        except TooLarge as too_large:
            error, status = str(too_large), 413
    return templates.TemplateResponse(
        request,
        "tournament.html",
        {"tournament": shown, "error": error},
        status_code=status if error else 200,
    )


async def _read_upload(upload: UploadFile) -> tuple[Tournament | None, str]:
    """An uploaded results file, shown to the browser that sent it only; or an error sentence."""
    raw = await upload.read(16 * 1024 * 1024 + 1)
    if len(raw) > 16 * 1024 * 1024:
        return None, "The results file is larger than 16 MiB."
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ResultsError(f"it is not a {FORMAT} results file")
        records = [GameRecord.from_json(g) for g in data.get("games", [])]
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None, f"{upload.filename} is not JSON."
    except (KeyError, TypeError, ValueError, ResultsError) as error:
        return None, f"{upload.filename} cannot be read: {error}."
    return from_records(upload.filename or "upload", dict(data.get("config", {})), records), ""


async def tournament_game(request: Request) -> Response:
    """A tournament game's replay: on the game server already, or played again there from its saved file.

    Playing a game again creates it on the game server, so it is counted as a creation of the visitor who
    asks first (the creation rate, and a place among its unfinished games until the replay has ended); a
    game played again here, or being played, is shown to anyone who asks for it without counting again.
    """
    web: Web = request.app.state.web
    game_id = request.path_params["game_id"]
    if not seats.GAME_ID.match(game_id):
        return Response("No such game.", status_code=404)
    if request.method == "POST" and not seats.same_origin(request):
        return Response("Refused: this request did not come from this site's own pages.", status_code=403)
    done = _replay_task(web, game_id)
    if done is not None and done.done():
        return RedirectResponse(f"/games/{done.result()}", status_code=303)
    try:
        await web.client.get_game(game_id)
        return RedirectResponse(f"/games/{game_id}", status_code=303)
    except ClientError as error:
        if error.code != grpc.StatusCode.NOT_FOUND:
            return _replay_page(request, game_id, None, str(error), 502)
    path = _saved_replay(web, game_id)
    if path is None:
        message = (
            f"Game {game_id} is not on the game server {web.address}, and this web server has no "
            "saved replay of it: start kutnahora-web with --results FILE (the tournament's results, beside "
            "its replays), or run the tournament with --server pointing at this game server."
        )
        return _replay_page(request, game_id, None, message, 404)
    if request.method == "GET":
        return _replay_page(request, game_id, path, "", 200)
    if done is None:
        try:
            done = await _start_replay(web, visitor(request), game_id, path)
        except Refused as refused:
            page = _replay_page(request, game_id, path, str(refused), 429)
            page.headers.update(refused.headers)
            return page
    try:
        new_id = await asyncio.shield(done)
    except (ReplayError, ClientError) as error:
        web.replayed.pop(game_id, None)
        return _replay_page(request, game_id, path, f"{error}.", 409)
    return RedirectResponse(f"/games/{new_id}", status_code=303)


def _replay_task(web: Web, game_id: str) -> asyncio.Task[str] | None:
    """The playing again of a tournament game that has succeeded here or is under way; None if there is
    none (never started, or failed)."""
    task = web.replayed.get(game_id)
    if task is None or not task.done():
        return task
    return task if not task.cancelled() and task.exception() is None else None


async def _start_replay(web: Web, who: str, game_id: str, path: Path) -> asyncio.Task[str]:
    """Play a tournament game again, as the visitor's creation: :class:`Refused` past its creation rate or
    its unfinished games; the place it takes is freed when the replay has ended, however it ends."""
    await web.limits.create_or_join(who)
    place = await reserve_game(web, who)
    started = _replay_task(web, game_id)  # another visitor's, started while this one's games were read
    if started is not None:
        web.limits.games.unreserve(place)
        return started
    task = asyncio.create_task(_play_again(web, path))
    task.add_done_callback(lambda _: web.limits.games.unreserve(place))
    web.replayed[game_id] = task
    return task


async def _play_again(web: Web, path: Path) -> str:
    async with await Client.connect(
        web.address, tls=web.tls, ca_cert=web.ca_cert, quota_token=web.quota_token
    ) as client:
        return await replay_onto(client, replays.load(path))


def _saved_replay(web: Web, game_id: str) -> Path | None:
    """The saved replay of a game of the --results tournament, where the runner wrote it."""
    if web.tournament is None or web.results is None:
        return None
    record = next((r for r in web.tournament.games if r.game_id == game_id), None)
    if record is None:
        return None
    folder = web.results.parent
    candidates = [folder / f"{web.results.stem}.replays" / f"{game_id}.json"]
    if record.replay and not record.replay.startswith("kutnahora://"):
        saved = Path(record.replay)
        candidates = [saved, folder / saved, folder / saved.name, *candidates]
    return next((c for c in candidates if c.is_file()), None)


def _replay_page(request: Request, game_id: str, path: Path | None, error: str, status: int) -> Response:
    return templates.TemplateResponse(
        request,
        "replay.html",
        {"game_id": game_id, "path": path, "error": error},
        status_code=status,
    )
