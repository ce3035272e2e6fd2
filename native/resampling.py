"""Resampling in the native core: the states a search draws from one observation, drawn in C++.

:func:`kutnahora.engine.resample` copies an observation's public facts into a state and draws its hidden
parts. Over one search the observation does not change, so a :class:`Resampler` does the public part
once (with the engine's ``resample``, whose state becomes the core's template) and writes down what is
hidden and where it may go (the plan); each :meth:`Resampler.draw` has the core copy the template and
draw the hidden parts with the same calls of the search's generator, in the same order, as the engine's
``resample`` makes: the same generator state gives the same game, in the core.
"""

from __future__ import annotations

import random

from kutnahora.engine.components import Color, ComponentSet
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.resample import resample
from kutnahora.engine.state import GameState
from kutnahora.engine.view import Observation
from kutnahora.native import core_module
from kutnahora.native.convert import LABELS, from_state
from kutnahora.native.game import NativeGame, core_components

RED = Color.RED.value


def _seen_buildings(state: GameState, observation: Observation) -> set[int]:
    """The building tiles the observation shows: stack tops, slots, the city, the town's discards."""
    seen = set(state.town_discards)
    seen.update(tile.building for tile in state.city.values())
    for player in state.players:
        seen.update(player.slots)
    if state.building_in_hand is not None:
        seen.add(state.building_in_hand)
    seen.update(stack.top for row in observation.town_hall for stack in row)
    return seen


def resampling_plan(observation: Observation, state: GameState) -> list[int]:
    """What is hidden in ``observation`` and where it may go, as ``native/core/src/resample.cpp`` reads it
    (``state``: the engine's resample of the observation, for its public parts)."""
    obs = observation
    components = state.components
    buildings = components.buildings
    seen = _seen_buildings(state, obs)
    plan = [len(obs.town_hall)]
    for row in obs.town_hall:
        plan.append(len(row))
        for stack in row:
            plan += [LABELS.index(stack.label), stack.top]
            if stack.label == RED:
                plan += [0, 0]
                continue
            hidden = [
                b
                for b in buildings
                if b.id not in seen
                and ((b.guild is not None and b.guild.value == stack.label) or b.color == stack.label)
            ]
            bottom = [b.id for b in hidden if b.bottom]
            rest = [b.id for b in hidden if not b.bottom]
            plan += [len(bottom), *bottom, len(rest), *rest]
    red = [b.id for b in buildings if b.color == RED and b.id not in seen]
    plan += [len(red), *red]

    tiles = components.mine_tiles
    known = set(obs.drawn) | set(obs.mine_discard_seen) | {m.tile for m in obs.mines}
    if obs.kept_tile is not None:
        known.add(obs.kept_tile)
    hidden_tiles = [t.id for t in tiles if t.id not in known]
    if obs.mine_reshuffles == 0:
        tier_of = {t.id: t.tier for t in tiles}
        tiers = sorted({t.tier for t in tiles}, reverse=True)
        plan += [0, len(tiers)]
        left = obs.mine_stack_size
        for tier in tiers:
            total = sum(1 for t in tiles if t.tier == tier)
            candidates = [t for t in hidden_tiles if tier_of[t] == tier]
            count = min(left, total)
            plan += [count, len(candidates), *candidates]
            left -= count
    else:
        plan += [1, obs.mine_stack_size, len(hidden_tiles), *hidden_tiles]
    plan += [obs.mine_discard_size - len(obs.mine_discard_seen)]
    plan += [len(obs.mine_discard_seen), *obs.mine_discard_seen]
    pending = obs.pending
    assert pending is not None
    own = obs.viewer is not None and pending.seat == obs.viewer
    holder = 0
    if not own and pending.kind is DecisionKind.MINE_TILE:
        holder = 1
    elif not own and pending.kind is DecisionKind.MINE_SQUARE:
        holder = 2
    plan.append(holder)

    if not obs.uses_events:
        return [*plan, 0]
    track = components.rounds_tracks[len(obs.players)]
    revealed_rounds = 0 if obs.phase in ("guild_sets", "guild_rows") else obs.round
    used = set(obs.revealed_events)
    decks: dict[str, list[int]] = {"A": [], "B": []}
    for card in components.event_cards:
        decks[card.deck].append(card.id)
    plan += [1, track.rounds, track.red_arrival_round, revealed_rounds]
    plan += [len(obs.revealed_events), *obs.revealed_events, len(decks["A"]), len(decks["B"])]
    for name in ("A", "B"):
        unseen = [e for e in decks[name] if e not in used]
        plan += [len(unseen), *unseen]
    return plan


class Resampler:
    """Draws whole games from one observation in the core, as :func:`kutnahora.engine.resample` would."""

    __slots__ = ("_plan", "_template", "components", "options")

    def __init__(self, observation: Observation, components: ComponentSet) -> None:
        state = resample(observation, random.Random(0), components)  # checks the observation, too
        self.components = components
        self.options = state.options
        table = core_components(components, state.options.players)
        self._template = core_module().Game.load(table, from_state(state))
        self._plan = resampling_plan(observation, state)

    def draw(self, rng: random.Random) -> NativeGame:
        """One game the viewer could be in, drawn with ``rng`` (left as the engine's resample leaves it)."""
        version, words, gauss = rng.getstate()
        game, after = self._template.resample(self._plan, words)
        rng.setstate((version, tuple(after), gauss))
        return NativeGame(game, self.components, self.options, 0)
