"""``kutnahora-play`` driven as a person would: in a pseudo-terminal, typing numbers (and mistakes)."""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import pytest

from kutnahora.clients.render import Names, game_screen, options_table
from kutnahora.clients.sdk import Client
from kutnahora.v1 import game_pb2
from tests.clients.helpers import ROOT, play_game, python_module, run_module

pexpect = pytest.importorskip("pexpect")

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = r"Your choice \(1-(\d+)\):"


def _as_from_a_shell() -> None:
    """In the child before it runs: Ctrl-C's signal handled and unblocked, as a shell starts a program,
    whatever the test process inherited or changed (an ignored or blocked SIGINT is inherited)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _signals(pid: int) -> str:
    """The signal lines of a process's status (blocked, ignored, caught, pending), for a failure's text."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError as error:
        return str(error)
    return "; ".join(
        line for line in lines if line.startswith(("SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt"))
    )


def _spawn(*args: str) -> pexpect.spawn:
    command = python_module("kutnahora.clients.human", *args)
    child = pexpect.spawn(
        command[0],
        command[1:],
        cwd=str(ROOT),
        encoding="utf-8",
        dimensions=(50, 160),
        timeout=30,
        preexec_fn=_as_from_a_shell,
    )
    child.delaybeforesend = None  # a person types no faster than the screen appears; no need to wait
    return child


def test_a_person_plays_a_whole_game_against_a_bot(server_address: str) -> None:
    child = _spawn(
        "--server", server_address, "--create", "--players", "2", "--opponents", "random", "--seed", "4"
    )
    screen: list[str] = []
    child.logfile_read = _Collector(screen)
    try:
        child.expect(r"for 2 players; you are seat 0")
        child.expect(PROMPT)
        first = ANSI.sub("", "".join(screen))
        # The whole visible game is drawn before the first question.
        for part in ("Prices", "Town hall", "Kutná Hora", "Mines", "St. Barbara", "Players", "Cards —"):
            assert part in first, part
        count = int(child.match.group(1))

        # Refused input is explained, and the question is asked again.
        child.sendline("abc")
        child.expect("'abc' is not a number or the short form of a listed option")
        child.expect(PROMPT)
        child.sendline(str(count + 5))
        child.expect(f"There is no option {count + 5}")
        child.expect(PROMPT)
        child.sendline("")
        child.expect("Type a number from 1 to")
        child.sendline("?")
        child.expect("draw the whole game again")
        child.expect(PROMPT)
        # A short form naming a card that does not exist is answered with what is wrong.
        child.sendline("play 9 mine")
        child.expect("There is no card 9; the action cards are 1, 2, 3, 4, 5, 6")
        child.expect(PROMPT)
        # The resign question shows its [y/N] (once eaten as markup); no keeps the game going.
        child.sendline("q")
        child.expect(re.escape("Resign this game and leave? [y/N]"))
        child.sendline("n")
        child.expect(PROMPT)

        decisions = 0
        saw_opponent = False
        while True:
            child.sendline("1")
            decisions += 1
            index = child.expect([PROMPT, r"Game over\."], timeout=30)
            text = ANSI.sub("", "".join(screen))
            saw_opponent = saw_opponent or "Seat 1 (random):" in text
            if index == 1:
                break
            assert decisions < 400
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    text = ANSI.sub("", "".join(screen))
    # Seat 0 of two chooses its guild set last, from the one set left: taken for it, and said so.
    assert "Only one choice, taken for you: Guilds " in text
    # Options show their price, as the engine charges it.
    assert "Cost" in text and re.search(r"\d+ groschen", text)
    # Round, turn and who is to play are printed just above every question, so a 50-row screen shows them.
    blocks = [block for block in text.split("Your choice (1-")[:-1] if "Short form" in block]
    assert len(blocks) > 10
    for block in blocks:
        last_lines = " ".join([line for line in block.splitlines() if line.strip()][-3:])
        assert "Round " in last_lines and "To play: You (seat 0)" in last_lines, last_lines
    assert saw_opponent, "the opponent's moves were never shown"
    assert "What happened since your last decision" in text
    assert "You chose:" in text
    assert "Final result" in text and ("You won with" in text or "You finished" in text)
    assert child.exitstatus == 0
    assert decisions > 20


def test_a_person_who_asks_to_confirm_forced_choices_is_asked(server_address: str) -> None:
    """--confirm-forced: a decision with a single option is asked like any other (seat 0 of two has one
    guild set left to take), and a card half that cannot be played is explained under the options."""
    child = _spawn(
        "--server",
        server_address,
        "--create",
        "--players",
        "2",
        "--opponents",
        "random",
        "--seed",
        "4",
        "--confirm-forced",
    )
    screen: list[str] = []
    child.logfile_read = _Collector(screen)
    try:
        if child.expect([r"Your choice \(1-1\):", pexpect.EOF]) == 1:
            pytest.fail("kutnahora-play ended early:\n" + ANSI.sub("", "".join(screen)))
        child.sendline("1")
        while child.expect([PROMPT, pexpect.TIMEOUT], timeout=30) == 0:
            text = ANSI.sub("", "".join(screen))
            if "Play an action card" in text.split("Your choice")[-2]:
                break
            child.sendline("1")
        text = ANSI.sub("", "".join(screen)).split("Your choice")[-2]
        # nobody holds a pelican at the start: card 6's St. Barbara half is not offered, and why
        assert "Not offered: " in text and "card 6 St. Barbara (you have no pelican token)" in text
    finally:
        child.close(force=True)


def test_the_creator_sees_the_other_seat_taken(server_address: str) -> None:
    """WatchGame tells of joins: "Waiting for 1 more player" is followed by who took the seat."""

    async def watchers() -> int:
        async with await Client.connect(server_address) as client:
            return int((await client.server_info()).watchers)

    before = asyncio.run(watchers())
    child = _spawn("--server", server_address, "--create", "--players", "2", "--opponents", "none")
    screen: list[str] = []
    child.logfile_read = _Collector(screen)
    try:
        child.expect("Waiting for 1 more player\\.")
        child.expect(r"--game (\w+)")
        game_id = child.match.group(1)

        async def join() -> None:
            async with await Client.connect(server_address) as client:
                for _ in range(300):  # the client watches the game before the seat is taken
                    if (await client.server_info()).watchers > before:
                        break
                    await asyncio.sleep(0.05)
                await client.join_game(game_id, 1, "ana")

        asyncio.run(join())
        child.expect(r"Seat 1 \(ana\) took a seat\.")
        child.expect("Every seat is taken; the game begins.")
    finally:
        child.close(force=True)


def test_the_client_words_options_and_costs_as_the_engine_does() -> None:
    """One wording of options: for every option met in random games, the client's wording of its payload
    (used where only the payload is known) is the engine's description, and its cost reads the same."""
    import random

    from kutnahora import engine, wire
    from kutnahora.clients.render import cost_text, describe_decision
    from kutnahora.engine.costs import option_cost
    from kutnahora.engine.text import describe_cost, describe_option
    from kutnahora.wire.values import DECISION_KIND

    components = wire.components_to_wire(engine.default_components())
    kinds = set()
    for players in (2, 3, 4):
        state = engine.new_game(engine.GameOptions(players=players), players)
        rng = random.Random(players)
        names = Names(components)
        while state.pending is not None:
            if not names.guild_sets:
                names.set_game(wire.observation_to_wire(engine.observe(state, None), "g"))
            pending = state.pending
            wire_kind = DECISION_KIND[pending.kind]
            for option in pending.options:
                payload = wire.option_to_decision(option)
                assert describe_decision(payload, wire_kind, names) == describe_option(
                    state, pending.kind, option
                )
                cost = option_cost(state, option)
                assert cost_text(wire.option_cost_to_wire(cost)) == describe_cost(cost)
            kinds.add(pending.kind)
            engine.apply(state, rng.choice(pending.options))
    assert len(kinds) >= 12


def test_a_person_leaves_and_comes_back_to_the_same_seat(server_address: str) -> None:
    """The seat token shown at joining brings a person back to their seat after they left the client."""
    import subprocess

    from kutnahora.v1 import game_pb2

    async def create() -> tuple[str, str]:
        async with await Client.connect(server_address) as client:
            created = await client.create_game(2, seed=11, clock=game_pb2.ClockSettings(disabled=True))
            seat = await client.join_game(created.game.game_id, 0, "person")
            return seat.game_id, seat.token

    game_id, token = asyncio.run(create())
    bot = subprocess.Popen(
        python_module(
            "kutnahora.clients.bots.cli",
            "random",
            "--server",
            server_address,
            "--game",
            game_id,
            "--seat",
            "1",
        ),
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    async def bot_joined() -> bool:
        async with await Client.connect(server_address) as client:
            for _ in range(300):
                if (await client.get_game(game_id)).seats[1].joined:
                    return True
                await asyncio.sleep(0.1)
        return False

    assert asyncio.run(bot_joined()), "the bot did not join its seat"
    rejoin = ("--server", server_address, "--game", game_id, "--seat", "0", "--token", token)
    try:
        child = _spawn(*rejoin)
        try:
            child.expect("Back in game")
            child.expect(f"{game_id}.*as seat 0")
            child.expect(PROMPT)
            child.sendline("1")
            child.expect(PROMPT)
            child.sendintr()  # the person leaves without resigning
            try:
                child.expect("your seat stays in the game")
            except pexpect.TIMEOUT:
                pytest.fail(f"Ctrl-C did not end kutnahora-play: {_signals(child.pid)}")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        child = _spawn(*rejoin)
        try:
            child.expect("Back in game")
            child.expect(f"{game_id}.*as seat 0")
            decisions = 0
            while child.expect([PROMPT, r"Game over\."], timeout=60) == 0:
                child.sendline("1")
                decisions += 1
                assert decisions < 400
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        assert child.exitstatus == 0
        assert decisions > 10
        wrong = run_module(
            "kutnahora.clients.human",
            "--server",
            server_address,
            "--game",
            game_id,
            "--seat",
            "0",
            "--token",
            "x",
        )
        assert wrong.returncode == 1 and "kutnahora-play:" in wrong.stderr
    finally:
        if bot.poll() is None:
            bot.kill()
        bot.wait(timeout=10)


class _Collector:
    """A pexpect log that keeps everything the program printed."""

    def __init__(self, sink: list[str]) -> None:
        self.sink = sink

    def write(self, data: str) -> None:
        self.sink.append(data)

    def flush(self) -> None:
        pass


def test_a_spectator_watches_a_finished_game(server_address: str) -> None:
    outcomes = asyncio.run(play_game(server_address, ["greedy", "random"], seed=8))
    game_id = outcomes[0].game_id
    done = run_module(
        "kutnahora.clients.human", "--server", server_address, "--watch", game_id, env={"COLUMNS": "160"}
    )
    assert done.returncode == 0, done.stderr
    assert "Seat 0 (greedy):" in done.stdout and "Final result" in done.stdout
    assert "winner" in done.stdout


def test_the_play_command_says_in_one_line_when_the_server_is_away() -> None:
    done = run_module("kutnahora.clients.human", "--server", "127.0.0.1:1")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "cannot connect" in done.stderr


async def test_the_board_draws_at_any_width(server_address: str) -> None:
    from rich.console import Console

    async with await Client.connect(server_address) as client:
        created = await client.create_game(4, seed=3)
        seats = [await client.join_game(created.game.game_id, s) for s in range(4)]
        components = await client.components()
        for seat in seats:
            response = await client.observe(seat.game_id, seat)
            observation = response.observation
            if observation.pending.seat == seat.seat:
                break
        spectator = (await client.observe(seats[0].game_id)).observation
    for width in (60, 100, 200):
        console = Console(width=width, record=True, force_terminal=False)
        names = Names(components, ["a", "b", "c", "d"], viewer=seat.seat)
        console.print(game_screen(observation, names))
        console.print(options_table(observation, names))
        console.print(game_screen(spectator, Names(components)))
        text = console.export_text()
        assert "Town hall" in text and "Players" in text
    assert len(observation.pending.options) >= 1


def _wire_positions(players: int, seed: int) -> list[game_pb2.Observation]:
    """Every position of a random engine game, as the seat to play sees it on the wire (with costs)."""
    import random

    from kutnahora import engine
    from kutnahora import wire as codec
    from kutnahora.engine.costs import option_cost
    from kutnahora.engine.text import QUESTIONS

    state = engine.new_game(engine.GameOptions(players=players), seed)
    rng = random.Random(seed)
    seen = []
    while state.pending is not None:
        pending = state.pending
        frozen = state
        wire = codec.observation_to_wire(
            engine.observe(state, pending.seat),
            "g",
            question=QUESTIONS[pending.kind],
            cost=lambda option, s=frozen: option_cost(s, option),
        )
        seen.append(wire)
        engine.apply(state, rng.choice(pending.options))
    return seen


def test_the_terminal_table_speaks_in_words() -> None:
    """No internal names, no cut building names at 140 columns, words for the labels, no misleading rows."""
    from rich.console import Console

    from kutnahora import engine
    from kutnahora import wire as codec
    from kutnahora.clients.human import help_text, nothing_to_pay
    from kutnahora.clients.render import readable

    components = codec.components_to_wire(engine.default_components())
    names = Names(components)
    positions = _wire_positions(2, 11)

    first = positions[0]
    console = Console(width=140, record=True, force_terminal=False)
    console.print(game_screen(first, names))
    text = console.export_text()
    assert "Houses gone" not in text and "deck cards" not in text
    assert "population price card 0" in text and "ore price card 0" in text
    assert re.search(r"│ *0, \d★ *│", text), "the mine rows say their stars in words"

    late = positions[len(positions) * 2 // 3]
    console = Console(width=140, record=True, force_terminal=False)
    console.print(game_screen(late, names))
    text = console.export_text()
    built = [names.building(tile.building) for tile in late.city]
    assert built
    for name in built:
        for word in name.split():
            assert word in text, f"{name!r} is cut on the board: {word!r} missing"
    assert "removed" in text and "Guild rows" in text

    assert readable("the silver_ore arm moves to notch 1") == "the silver and ore arm moves to notch 1"
    assert readable("the wood arm moves to notch 2") == "the wood arm moves to notch 2"

    squares = [w for w in positions if w.pending.kind == game_pb2.DECISION_KIND_PLOT_SQUARE]
    assert squares
    words = help_text(squares[0])
    assert "play 2 mine" not in words and '"square ' in words

    taxes = [w for w in positions if w.pending.kind == game_pb2.DECISION_KIND_TAX]
    assert taxes
    for wire in taxes:
        pay = next(o for o in wire.pending.options if o.decision.confirm.yes)
        free = nothing_to_pay(wire)
        if pay.cost.groschen == 0:
            assert free == pay.index
        else:
            assert free is None
    assert any(nothing_to_pay(w) is None for w in taxes)
