"""A hosted bot: it plays the one seat the arena's worker hands it, taking the first legal option each time.

A start to improve on: docs/bots.md shows what an observation holds and how the project's bots choose.
"""

import asyncio
import os

from kutnahora.clients import Bot, Client
from kutnahora.clients.sdk import SeatCredentials
from kutnahora.v1.game_pb2 import LegalOption, Observation


class FirstOption(Bot):
    name = "first-option"

    def choose(self, observation: Observation) -> LegalOption:
        return observation.pending.options[0]


async def main() -> None:
    seat = SeatCredentials(
        os.environ["KUTNAHORA_GAME_ID"], int(os.environ["KUTNAHORA_SEAT"]), os.environ["KUTNAHORA_TOKEN"]
    )
    async with await Client.connect(os.environ["KUTNAHORA_SERVER"]) as client:
        await client.play(FirstOption(), seat)


asyncio.run(main())
