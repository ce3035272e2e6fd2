"""The random bot: a uniformly random legal option, from its own seeded generator.

It knows nothing of the game beyond the listed options, which makes it the baseline every other bot is
measured against, and a quick way to fill seats.
"""

from __future__ import annotations

import random

from kutnahora.clients.sdk import Bot, Choice
from kutnahora.v1.game_pb2 import LegalOption, Observation


class RandomBot(Bot):
    """Chooses uniformly among the listed options; the same seed gives the same choices."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, observation: Observation) -> Choice:
        options: list[LegalOption] = list(observation.pending.options)
        return self.rng.choice(options)
