"""Kutná Hora as an OpenSpiel game, registered with pyspiel's Python game API.

Importing this module registers ``python_kutna_hora``::

    import pyspiel
    import kutnahora.envs.openspiel_game  # registers the game
    game = pyspiel.load_game("python_kutna_hora(players=3,events=True,seed=7)")

Parameters: ``players`` (2–4, default 4), ``events`` (use event cards with 3 or 4 players; 2 players
always do), ``seed`` (the seed of the sequence of games this game object deals), ``normalized`` (the
tensors in the normalised form of :meth:`~kutnahora.learned.encoding.ObservationLayout.encode`, every entry
in [0, 1] or [−1, 1]; default false, the game's own numbers). An initial state deals its game, from the
next seed of the sequence, when it is first used; a clone never deals. The game's shape and size queries
(``observation_tensor_shape``, ``observation_tensor_size``, ``information_state_tensor_shape``,
``information_state_tensor_size``) are answered from the layout, without making a state, so asking them
never changes which games are dealt. pyspiel's own C++ versions of them, which C++ code calls, make a new
state and observe it through the observer: observing a state that has not been used yet does not deal it
either, but shows the game it will deal (the next seed's, dealt ahead and kept while the seed stays in the
sequence), and the state plays that very game once used. So no shape query, from Python or C++, changes
the deal; a state observed before its first use plays the game it showed, even if another state took that
seed from the sequence in between.

**Sampled stochastic.** The engine draws its own randomness (the setup, the mine tiles, the town hall's
refills, the events) from a seeded generator inside the state while it applies a decision; it never poses
a chance decision with a list of outcomes and probabilities. Exposing those draws as explicit chance nodes
would mean re-writing every shuffle of the rules as a decision of a chance player. So the game is
``SAMPLED_STOCHASTIC``: there are no chance nodes, a state's future draws are fixed by its generator
(cloning a state clones them), and ``resample_from_infostate`` draws a fresh world, hidden parts and
generator included, from what a seat has seen (:func:`kutnahora.engine.resample`).

**Players and actions.** The current player is the seat owing the pending decision (the setup draft
included). Actions are the ids of :class:`~kutnahora.learned.actions.ActionSpace`; the legal ones are the
ids of the decision's options, in ascending order.

**Observations.** ``observation_tensor`` is the seat's :class:`~kutnahora.learned.encoding.ObservationLayout`
vector and ``observation_string`` the seat's view as readable text, in the manner of ``str(state)``
(:func:`kutnahora.learned.outcome.observation_text`: round and phase, every seat's score, groschen and
reputation, the seat's own hand, the pending decision and, to the seat that owes it, its options); with
public information only (``IIGObservationType(private_info=NONE)``), the spectator's view, seats relative
to seat 0. ``information_state_string`` is the seat's observation string, the mine tiles it has been
shown, and every action taken so far (the options chosen in this game are all public, and every seat sees
them). ``information_state_tensor`` is the observation vector followed by flags of the mine tiles the seat
has been shown (drawn for it to choose from) during the game: a fixed-size summary, not the whole history.

**Serialization.** ``state.serialize()`` and ``game.deserialize_state(text)`` work (the engine's state is
pickled whole). ``pickle`` works for the game and for a state, so they cross process boundaries
(``multiprocessing``, OpenSpiel's ``games_sim_test``): a game is pickled as its string (what
``pyspiel.load_game`` reads back) with the place its sequence of deals has reached, so the copy deals the
same games next; a state as its game and its ``serialize()`` text. pyspiel's own
``serialize_game_and_state`` still does not work: for a sampled-stochastic game it asks the game for its
random state through C++ (``GetRNGState``), which a Python game cannot give.

**Engines.** The game is played by the engine :func:`kutnahora.native.active_engine` selects when the
game object is made (:mod:`kutnahora.envs.stepping`): the native core when it is built, unless
``KUTNAHORA_ENGINE=python``. Both give the same games, legal actions, tensors and returns; the core applies
actions and writes the tensors in C++. ``state.engine`` is the engine's state either way (on the core, a
copy written out when asked for); the strings, ``resample_from_infostate`` and serialization go through it.

**Speed.** pyspiel's ``State`` methods are C++ that call back into the Python state; each call from C++
into Python costs about half a microsecond, as much as the core's own work on a decision. So the state
answers ``legal_actions`` itself (pyspiel's C++ ``legal_actions`` asks ``current_player`` three times and
``is_terminal`` once before ``_legal_actions``; C++ callers still go that way, to the same answer), and
keeps the current player, set as each action is applied, for ``current_player`` and ``is_terminal``.
``apply_action`` stays pyspiel's: it records the action in the C++ state's history (``history()``,
``move_number()``, ``serialize()``, clones), and calls ``current_player`` and ``_apply_action``.

**Returns** are the terminal, zero-sum returns of :func:`kutnahora.learned.outcome.returns`, in [−1, 1].

**Game length.** OpenSpiel needs a bound on the number of decisions: 2 per seat for the draft and 16 per
action card played (rounds × 5 cards × seats). The most decisions seen between two cards in 450 random
games of 2–4 players is 8.
"""

from __future__ import annotations

import ctypes
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from kutnahora.engine import (
    GameOptions,
    GameState,
    Observation,
    Observer,
    default_components,
    observe,
    option_text,
    resample,
)
from kutnahora.engine.options import DecisionKind
from kutnahora.envs.stepping import Game, stepper
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.outcome import observation_text, position_text

SHORT_NAME = "python_kutna_hora"
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_MINE_TILE = DecisionKind.MINE_TILE
DECISIONS_PER_CARD = 16
CARDS_PER_ROUND = 5

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Kutná Hora: The City of Silver",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    provides_factored_observation_string=False,
    parameter_specification={"players": 4, "events": False, "seed": 0, "normalized": False},
)


def max_game_length(players: int) -> int:
    """The bound OpenSpiel is given: the draft, and 16 decisions per action card played."""
    rounds = default_components().rounds_tracks[players].rounds
    return 2 * players + DECISIONS_PER_CARD * rounds * CARDS_PER_ROUND * players


class KutnaHoraGame(pyspiel.Game):  # type: ignore[misc]
    """The game for one number of players; deals a new seeded game for every initial state.

    Made by :func:`make_game` (what ``pyspiel.load_game`` calls), which checks the parameters first.
    """

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        players = int(params.get("players", 4))
        self.layout = ObservationLayout()
        self.space = ActionSpace(self.layout.components)
        self.players = players
        """The number of seats (what ``num_players()`` says, read without a call into pyspiel)."""
        self.options = GameOptions(players=players, events=bool(params.get("events", False)))
        self._seeds = random.Random(int(params.get("seed", 0)))
        self.normalized = bool(params.get("normalized", False))
        self.observer = Observer()
        """Observes this game's states for the strings, rebuilding only the parts of a view that changed."""
        self.stepper = stepper(self.layout, self.space, self.normalized)
        """Deals and steps this game's states, on the engine or the native core, and writes their tensors."""
        info = pyspiel.GameInfo(
            num_distinct_actions=self.space.size,
            max_chance_outcomes=0,
            num_players=players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=max_game_length(players),
        )
        super().__init__(GAME_TYPE, info, params)
        self.observation_observer = KutnaHoraObserver(self, None, None)
        self.information_observer = KutnaHoraObserver(
            self, pyspiel.IIGObservationType(perfect_recall=True), None
        )

    def observation_tensor_shape(self) -> list[int]:
        """The observation tensor's shape, from the layout (no state is made, no game dealt)."""
        return [self.layout.size]

    def observation_tensor_size(self) -> int:
        """The observation tensor's length, from the layout."""
        return self.layout.size

    def information_state_tensor_shape(self) -> list[int]:
        """The information-state tensor's shape: the observation and the mine tiles shown."""
        return [self.layout.size + self.layout.mine_tiles]

    def information_state_tensor_size(self) -> int:
        """The information-state tensor's length."""
        return self.layout.size + self.layout.mine_tiles

    def new_initial_state(self) -> KutnaHoraState:
        """A new game, set up from the next seed when it is first used."""
        return KutnaHoraState(self)

    def deal(self) -> Game:
        """A new game, from the next seed of this game's sequence."""
        return self.stepper.new(self.options, self._seeds.getrandbits(63))

    def deal_ahead(self) -> tuple[int, Game]:
        """The game :meth:`deal` would deal next, and its seed, without taking the seed from the sequence."""
        seed = self._next_seed()
        return seed, self.stepper.new(self.options, seed)

    def take(self, seed: int, dealt: Game) -> Game:
        """A game :meth:`deal_ahead` dealt, now in use: its seed leaves the sequence if still the next."""
        if self._next_seed() == seed:
            self._seeds.getrandbits(63)
        return dealt

    def _next_seed(self) -> int:
        ahead = random.Random()
        ahead.setstate(self._seeds.getstate())
        return ahead.getrandbits(63)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its string and the place its sequence of deals has reached (pyspiel's own pickling
        asks for a random state a Python game cannot give)."""
        return (_unpickle_game, (str(self), self._seeds.getstate()))

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> KutnaHoraObserver:
        """The observer of observations (default) or information states (``perfect_recall``)."""
        return KutnaHoraObserver(self, iig_obs_type, params)


class Play:
    """The Python side of a state: the game (on the engine or the core), the actions taken, and what each
    seat was shown.

    OpenSpiel clones a Python state by making a new initial state and deep-copying each attribute of the
    original into it, so this one attribute holds everything and copies itself with the game's fast
    clone. A new initial state sets its game up only when first used: a state made to receive a clone never
    deals a game, nor takes a seed from the game's sequence.
    """

    __slots__ = ("_dealt", "_preview", "actions", "game", "player", "shown", "views")

    def __init__(
        self,
        game: KutnaHoraGame,
        dealt: Game | None = None,
        actions: list[int] | None = None,
        shown: list[set[int]] | None = None,
    ) -> None:
        self.game = game
        self._dealt = dealt
        self._preview: tuple[int, Game] | None = None
        """The game this state will deal, dealt ahead to be observed without taking a seed (see position)."""
        self.actions: list[int] = actions if actions is not None else []
        """Every action taken so far, in order (the options chosen are public)."""
        self.shown: list[set[int]] = (
            shown if shown is not None else [set() for _ in range(game.num_players())]
        )
        """Per seat, the mine tiles it has been shown to choose from."""
        self.views: dict[int | None, Observation] = {}
        """Observations made of the current position, by seat (None: public), for the tensors and strings."""
        self.player: int | None = None if dealt is None else _player_of(dealt)
        """OpenSpiel's current player: the seat owing the pending decision, or TERMINAL; None while the game
        is not dealt. Set when the game is dealt and after every action, so that the questions of who is to
        play and whether the game is over (pyspiel's ``apply_action`` asks one, a Python loop its own) do
        not each ask the game."""

    def deal(self) -> int:
        """Deal the game if it is not dealt yet (see :attr:`dealt`); the current player."""
        return _player_of(self.dealt)

    def view(self, seat: int | None) -> Observation:
        """The observation of the current position for a seat (None: the public one)."""
        found = self.views.get(seat)
        if found is None:
            found = self.views[seat] = self.game.observer.observe(self.position.state(), seat)
        return found

    @property
    def dealt(self) -> Game:
        """The game, dealt from the game's next seed on first use."""
        dealt = self._dealt
        if dealt is None:
            preview = self._preview
            dealt = self._dealt = self.game.deal() if preview is None else self.game.take(*preview)
            self.player = _player_of(dealt)
        return dealt

    @property
    def engine(self) -> GameState:
        """The engine's state of the game (dealt on first use; on the native core, a copy)."""
        return self.dealt.state()

    @property
    def position(self) -> Game:
        """The game to observe, without dealing a game that has not been dealt.

        A state not used yet is observed as the game it will deal: the next seed's, dealt ahead and kept,
        the seed left in the game's sequence. pyspiel's C++ shape queries make a new state and observe it
        through the observer to learn the tensor's size, so observing must not take a seed; should the state
        be used later, it deals that very game (taking the seed if it is still the next).
        """
        dealt = self._dealt
        if dealt is not None:
            return dealt
        preview = self._preview
        if preview is None:
            preview = self._preview = self.game.deal_ahead()
        return preview[1]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the game's string, the engine's state and the records (for pyspiel's serialize)."""
        return (_unpickle_play, (str(self.game), self.engine, self.actions, self.shown))

    def __deepcopy__(self, memo: dict[int, Any]) -> Play:
        copied = Play(self.game, self.dealt.clone(), self.actions.copy(), [s.copy() for s in self.shown])
        copied.views = self.views.copy()  # observations are immutable
        return copied


def _player_of(game: Game) -> int:
    seat = game.seat
    return _TERMINAL if seat is None else seat


def _unpickle_game(text: str, seeds: Any) -> KutnaHoraGame:
    game = pyspiel.load_game(text)
    assert isinstance(game, KutnaHoraGame)
    game._seeds.setstate(seeds)
    return game


def _unpickle_state(game: KutnaHoraGame, text: str) -> KutnaHoraState:
    state = game.deserialize_state(text)
    assert isinstance(state, KutnaHoraState)
    return state


def _unpickle_play(game: str, engine: GameState, actions: list[int], shown: list[set[int]]) -> Play:
    loaded = pyspiel.load_game(game)
    assert isinstance(loaded, KutnaHoraGame)
    return Play(loaded, loaded.stepper.load(engine), actions, shown)


class KutnaHoraState(pyspiel.State):  # type: ignore[misc]
    """One game in progress."""

    def __init__(self, game: KutnaHoraGame, play: Play | None = None) -> None:
        super().__init__(game)
        self.play = play if play is not None else Play(game)

    @property
    def engine(self) -> GameState:
        """The engine's state of this game."""
        return self.play.engine

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its game and its ``serialize()`` text."""
        return (_unpickle_state, (self.game, self.serialize()))

    @property
    def game(self) -> KutnaHoraGame:
        """The game this state belongs to."""
        return self.play.game

    def current_player(self) -> int:
        """The seat owing the pending decision, or TERMINAL."""
        player = self.play.player
        return player if player is not None else self.play.deal()

    def legal_actions(self, player: int | None = None) -> list[int]:
        """The legal actions of ``player`` (default: the current player), in ascending order; none for a
        seat that does not owe the decision, nor once the game is over.

        Answered here for Python callers, as pyspiel's ``State.legal_actions`` answers: that one is C++,
        which asks the Python state who is to play three times and whether the game is over before it asks
        :meth:`_legal_actions`, five calls from C++ into Python for one list. C++ callers (``LegalActions``,
        ``legal_actions_mask``) still go that way, to the same answer.
        """
        play = self.play
        current = play.player
        if current is None:
            current = play.deal()
        if player is None or player == current:
            return [] if current == _TERMINAL else play.dealt.sorted_ids()
        if player < 0 and current != _TERMINAL:
            raise pyspiel.SpielError(f"Called LegalActions for pseudo-player {player}")
        return []

    def _legal_actions(self, player: int) -> list[int]:
        play = self.play
        game = play._dealt or play.dealt
        if player != game.seat:
            return []
        return game.sorted_ids()

    def _apply_action(self, action: int) -> None:
        play = self.play
        game = play._dealt or play.dealt
        try:
            index = game.ids().index(action)
        except ValueError:
            pending = game.pending()
            if pending is None:
                raise ValueError("the game is over; no action is accepted") from None
            raise ValueError(self.game.space.refusal(action, pending)) from None
        if game.kind() is _MINE_TILE:
            seat = game.seat
            assert seat is not None
            play.shown[seat].update(game.drawn())
        game.apply(index)
        seat = game.seat
        play.player = _TERMINAL if seat is None else seat
        play.actions.append(int(action))
        if play.views:
            play.views = {}

    def _action_to_string(self, player: int, action: int) -> str:
        return f"seat {player}: {option_text(self.game.space.option_of(action))}"

    def is_terminal(self) -> bool:
        player = self.play.player
        return (player if player is not None else self.play.deal()) == _TERMINAL

    def returns(self) -> list[float]:
        return self.play.dealt.returns()

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> KutnaHoraState:
        """A state the seat cannot tell from this one, its hidden parts drawn afresh.

        The hidden parts (stack orders, other seats' drawn tiles, future events, the generator) come from
        :func:`kutnahora.engine.resample` of the seat's observation, seeded by ``probability_sampler``;
        the actions so far and what the seat was shown are kept, what other seats were shown is not known
        to it and starts empty.
        """
        seed = int(probability_sampler() * 2**53)
        here = self.engine
        engine = resample(observe(here, player_id), random.Random(seed), here.components)
        shown: list[set[int]] = [set() for _ in here.players]
        shown[player_id] = self.play.shown[player_id].copy()
        world = self.game.stepper.load(engine)
        return KutnaHoraState(self.game, Play(self.game, world, self.play.actions.copy(), shown))

    def observation_tensor(self, player: int | None = None) -> list[float]:
        """The seat's observation vector (default: the current player's), as pyspiel gives it: a list.

        Written here rather than inherited: pyspiel's own works out the tensor's size from a fresh initial
        state on every call, which costs a whole game setup each time. The list is written straight from
        the game (:meth:`kutnahora.envs.stepping.Game.tensor`), no observation made.
        """
        play = self.play
        game = play.game
        if player is None:
            player = self.current_player()
        if not 0 <= player < game.players:
            raise ValueError(f"player must be 0..{game.players - 1}, not {player}")
        return (play._dealt or play.position).tensor(player)

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        """The seat's information-state vector (default: the current player's), as a list: the observation
        vector, then flags of the mine tiles the seat has been shown."""
        tensor = self.observation_tensor(player)
        seat = self.current_player() if player is None else player
        shown = [0.0] * self.game.layout.mine_tiles
        for tile in self.play.shown[seat]:
            shown[tile] = 1.0
        tensor.extend(shown)
        return tensor

    def __str__(self) -> str:
        return position_text(self.engine)


class KutnaHoraObserver:
    """Fills the observation or information-state tensor and string of a state for one seat."""

    def __init__(
        self,
        game: KutnaHoraGame,
        iig_obs_type: pyspiel.IIGObservationType | None,
        params: dict[str, Any] | None,
    ) -> None:
        if params:
            raise ValueError(f"the Kutná Hora observer takes no parameters, not {params}")
        self.perfect_recall = bool(iig_obs_type.perfect_recall) if iig_obs_type is not None else False
        private = (
            iig_obs_type.private_info if iig_obs_type is not None else pyspiel.PrivateInfoType.SINGLE_PLAYER
        )
        if private == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError("a Kutná Hora observation shows one seat's private information, not all seats'")
        if iig_obs_type is not None and not iig_obs_type.public_info:
            raise ValueError("a Kutná Hora observation always includes the public information")
        self.private = private == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.layout = game.layout
        self.normalized = game.normalized
        tiles = game.layout.mine_tiles
        size = self.layout.size + (tiles if self.perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[: self.layout.size]}
        if self.perfect_recall:
            self.dict["shown"] = self.tensor[self.layout.size :]

    def set_from(self, state: KutnaHoraState, player: int) -> None:
        """Write ``player``'s view of ``state`` into :attr:`tensor`."""
        state.play.position.vector(player if self.private else None, self.dict["observation"])
        if self.perfect_recall:
            shown = self.dict["shown"]
            shown.fill(0.0)
            if self.private:
                shown[list(state.play.shown[player])] = 1.0

    def string_from(self, state: KutnaHoraState, player: int) -> str:
        """``player``'s view of ``state`` as text (with the history, for an information state)."""
        observation = observation_text(state.play.view(player if self.private else None))
        if not self.perfect_recall:
            return observation
        shown = sorted(state.play.shown[player]) if self.private else []
        return f"{observation}\nshown {shown}\nactions {state.play.actions}"


def make_game(params: dict[str, Any] | None = None) -> KutnaHoraGame:
    """The game for these parameters; a bad parameter is refused before any game object exists."""
    params = dict(params or {})
    players = int(params.get("players", 4))
    if players not in (2, 3, 4):
        raise ValueError(f"Kutná Hora is played by 2, 3 or 4 players, not {players}")
    unknown = sorted(set(params) - set(GAME_TYPE.parameter_specification))
    if unknown:
        raise ValueError(
            f"unknown parameter {', '.join(unknown)}; the parameters are players, events, seed and normalized"
        )
    return KutnaHoraGame(params)


pyspiel.register_game(GAME_TYPE, make_game)
# pyspiel's registry, a C++ static, now holds make_game and releases it only after the interpreter has
# finished, without a thread state. Should every Python reference be gone by then (a module dropped
# from sys.modules), that release would free the function and abort the process at exit; one reference
# that is never given back keeps the function alive to the end.
ctypes.pythonapi.Py_IncRef(ctypes.py_object(make_game))
