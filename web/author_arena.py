"""The arena's calls that act for a bot's author, with the bot's API key: its hosted versions, a version's
build log, a seat's log, pausing and resuming its hosted play, and uploading a new version.

:class:`AuthorArena` is the arena client of the web's arena pages (:mod:`.arena_pages`), which gives
these calls beside the public ones of :class:`~kutnahora.clients.arena_client.ArenaClient`. The key goes
to the arena as ``authorization: Bearer <key>`` and nowhere else; a refusal is a
:class:`~kutnahora.clients.sdk.ClientError` whose message is the arena's sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import Client
from kutnahora.v1 import arena_service_pb2

CALL_SECONDS = 15.0
"""How long a page waits for one of these calls before it says the arena did not answer."""
UPLOAD_SECONDS = 60.0
"""How long an upload (up to 4 MiB to send, and the arena's checks of it) may take."""


class AuthorArena(ArenaClient):
    """An arena connection whose calls can also act for a bot, given its API key."""

    async def submissions(self, api_key: str) -> arena_service_pb2.ListSubmissionsResponse:
        """The bot's hosted versions, newest first, and whether (and why) its hosted play is paused."""
        return await Client._call(
            self._arena.ListSubmissions(
                arena_service_pb2.ListSubmissionsRequest(), metadata=self._auth(api_key), timeout=CALL_SECONDS
            ),
            "listing the bot's versions",
            arena_service_pb2.ListSubmissionsResponse,
        )

    async def submission(self, api_key: str, version: int) -> arena_service_pb2.GetSubmissionResponse:
        """One of the bot's versions, with its build log."""
        return await Client._call(
            self._arena.GetSubmission(
                arena_service_pb2.GetSubmissionRequest(version=version),
                metadata=self._auth(api_key),
                timeout=CALL_SECONDS,
            ),
            f"reading version {version}",
            arena_service_pb2.GetSubmissionResponse,
        )

    async def seat_log(self, api_key: str, game_id: str) -> arena_service_pb2.GetSeatLogResponse:
        """What the bot's hosted code wrote while it played its seat of ``game_id``."""
        return await Client._call(
            self._arena.GetSeatLog(
                arena_service_pb2.GetSeatLogRequest(game_id=game_id),
                metadata=self._auth(api_key),
                timeout=CALL_SECONDS,
            ),
            f"reading the bot's log of game {game_id}",
            arena_service_pb2.GetSeatLogResponse,
        )

    async def set_hosting(self, api_key: str, *, paused: bool) -> bool:
        """Pause or resume the bot's hosted play; whether it is paused now."""
        response = await Client._call(
            self._arena.SetHosting(
                arena_service_pb2.SetHostingRequest(paused=paused),
                metadata=self._auth(api_key),
                timeout=CALL_SECONDS,
            ),
            "pausing the bot's hosted play" if paused else "resuming the bot's hosted play",
            arena_service_pb2.SetHostingResponse,
        )
        return bool(response.paused)

    async def submit_bot(
        self, api_key: str, archive: bytes, pools: Sequence[str] = ()
    ) -> arena_service_pb2.SubmitBotResponse:
        """Upload a new version of the bot's hosted code (a gzip'd tar of its submission folder), to be
        played in ``pools`` (none: every pool)."""
        return await Client._call(
            self._arena.SubmitBot(
                arena_service_pb2.SubmitBotRequest(archive=archive, pools=list(pools)),
                metadata=self._auth(api_key),
                timeout=UPLOAD_SECONDS,
            ),
            "submitting the bot's code",
            arena_service_pb2.SubmitBotResponse,
        )
