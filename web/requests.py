"""Reading a request and refusing it: the API's wrapper (:func:`api`), the bounded body, its fields, who
sent it, and the refusals (:class:`BadRequest`, :class:`TooLarge`, :class:`TooSlow`, a game server's
error) as a JSON sentence with its HTTP status."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Message

from kutnahora.clients.sdk import ClientError
from kutnahora.web import seats
from kutnahora.web.limits import STATE_KEY, Refused
from kutnahora.web.state import Web

HTTP_STATUS = {
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.UNAUTHENTICATED: 403,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
}


class BadRequest(Exception):
    """A request the page should not have sent; the message says what is wrong."""

    status = 400


class TooLarge(BadRequest):
    """A request body longer than :data:`MAX_BODY_BYTES` (refused before the rest of it is read)."""

    status = 413


class TooSlow(BadRequest):
    """A request body that did not arrive within :data:`BODY_SECONDS`."""

    status = 408


BODY_SECONDS = 5.0
"""How long the API waits for a request's body to arrive in full: a client that sends it a few bytes at a
time would otherwise hold its connection, and a coroutine here, for as long as it liked."""


MAX_BODY_BYTES = 16 * 1024
"""The longest request body the API reads: its own pages send a few dozen bytes (a seat list, a decision's
index); a longer body is refused with 413 as soon as it is seen to be longer, not buffered in memory."""


def error_response(error: Exception) -> JSONResponse:
    """A JSON ``{"error": sentence}`` with the HTTP status that matches the gRPC one."""
    if isinstance(error, ClientError):
        status = HTTP_STATUS.get(error.code, 502) if error.code is not None else 502
        return JSONResponse({"error": str(error)}, status_code=status)
    return JSONResponse(
        {"error": str(error)}, status_code=error.status if isinstance(error, BadRequest) else 400
    )


def api(
    handler: Callable[[Request, Web], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """Wrap an API route: POSTs must come from this site, errors become sentences with a status."""

    async def route(request: Request) -> Response:
        if request.method != "GET" and not seats.same_origin(request):
            return JSONResponse(
                {"error": "Refused: this request did not come from this site's own pages."}, status_code=403
            )
        try:
            return await handler(request, request.app.state.web)
        except (ClientError, BadRequest) as error:
            return error_response(error)
        except Refused as refused:
            return refused.response()

    return route


def visitor(request: Request) -> str:
    """Who sent the request, as :class:`VisitorGate` named them."""
    return str(request.scope.get("state", {}).get(STATE_KEY, "unknown"))


def bounded_body(request: Request, most: int, sentence: str) -> Request:
    """``request`` as one whose body :class:`TooLarge` (saying ``sentence``) ends once more than ``most``
    bytes have come (at once when its ``Content-Length`` says so), so that whatever reads it (a form's
    parser, which spools files to disk) never takes more."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > most:
        raise TooLarge(sentence)
    seen = 0

    async def receive() -> Message:
        nonlocal seen
        message = await request.receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > most:
                raise TooLarge(sentence)
        return message

    return Request(request.scope, receive)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's body, a JSON object of at most :data:`MAX_BODY_BYTES`; :class:`BadRequest` (or
    :class:`TooLarge`) with a sentence otherwise. The body is read as it comes, and no further than the
    bound: a client that announces or sends more is answered at once."""
    bounded = bounded_body(
        request,
        MAX_BODY_BYTES,
        f"The request body is longer than {MAX_BODY_BYTES:,} bytes; this API takes short JSON.",
    )
    try:
        async with asyncio.timeout(BODY_SECONDS):
            body = await bounded.body()
    except TimeoutError:
        raise TooSlow(f"The request body did not arrive within {BODY_SECONDS:g} s.") from None
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):  # nested past the parser's depth
        raise BadRequest("The request body is not JSON.") from None
    if not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object.")
    return data


def integer(data: dict[str, Any], key: str, low: int, high: int, default: int | None = None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadRequest(f"'{key}' must be a whole number from {low} to {high}.")
    return value


def text(data: dict[str, Any], key: str, default: str, most: int = 100) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or len(value) > most:
        raise BadRequest(f"'{key}' must be a text of at most {most} characters.")
    return value.strip() or default
