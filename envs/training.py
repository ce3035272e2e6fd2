"""Train the policy and value network by PPO in self-play against a league: ``kutnahora-train``.

**The method.** Proximal policy optimisation (PPO, clipped objective, generalised advantage estimates)
over whole games played in process. Every game draws its number of players
(``--players``, two players most often) and its opponents (``--opponents``): **self** (every seat is the
learning network, and every seat's decisions are training data), **past** (one seat learns, the others are
a frozen copy of the network from an earlier iteration, sampled from a pool of the last few), **greedy**
(the one-step heuristic bot) or **mcts:N** (the search bot with N iterations a decision). Self-play and
the past copies keep the policy from overfitting one fixed opponent (a policy trained only against
greedy beats it and still loses every game to the search bot); greedy and the search bot keep it honest
against play unlike its own. A decision with one legal option is played without the network and is not
a training sample. The reward is the terminal return of :func:`kutnahora.learned.outcome.returns` and
nothing before it; the value head learns that return.

Decisions of many games (``--games``) are gathered and the network decides them in one batched forward
pass; the rules, the observation vectors and the opponents run in between. The games of the kinds in
:data:`CORE_KINDS` (self, past, random) are played by the native core when it is built
(:mod:`kutnahora.envs.stepping`), which applies the decisions, lists the action ids and writes the
vectors; the bots' games stay on the engine. The samples are the same either way. The network is
:mod:`kutnahora.learned.network`'s shape in PyTorch; each checkpoint is also exported to a NumPy weights file,
which is what the ``neural`` bot plays with.

**The run folder** (``--run``; by default a new ``kutnahora-runs/neural-<time>`` under the current
folder, never a tracked file) holds ``config.json`` (every option and the seed), ``checkpoint.pt`` (model,
optimiser, generators, counters: ``--resume`` continues from it), ``latest.npz`` and
``weights/iter-NNNNN.npz`` (exported networks), ``pool/`` (the past copies), ``history.json`` (one line
per iteration: samples, games, returns by opponent, losses, seconds), ``evaluations.json`` (win rates of
the deterministic and the sampled policy against greedy at two and four players, and against a search
bot, with Wilson intervals) and ``curve.png`` (the learning curve). A progress bar shows the samples
done.

Commands (the command line is :mod:`kutnahora.envs.train`)::

    kutnahora-train run --run RUN                    # train (hours; checkpoints every few minutes)
    kutnahora-train run --run RUN --resume           # go on from RUN's checkpoint
    kutnahora-train run --smoke --run /tmp/smoke     # the whole pipeline in seconds, not learning
    kutnahora-train export RUN                       # RUN's latest network → the bot's weights file
    kutnahora-train distill --run RUN                # expert iteration instead (kutnahora.envs.distill)

Needs the ``train`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kutnahora.clients.files import write_json
from kutnahora.engine import GameOptions
from kutnahora.envs.matches import NetPlayer, SeatPlayer, bot_player, evaluate
from kutnahora.envs.models import build_model, initial_model, save_network, to_numpy
from kutnahora.envs.opponents import RandomOpponent
from kutnahora.envs.run_folder import add_run_arguments, draw_curve, git_commit, occupied, records_until
from kutnahora.envs.stepping import CoreStepper, EngineStepper, Game, Stepper
from kutnahora.learned import network
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.native import NATIVE, active_engine


def parse_weights(text: str, what: str) -> dict[str, float]:
    """``a=3,b=1`` as weights by name; ``ValueError`` says what is wrong."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, sep, weight = part.strip().partition("=")
        try:
            value = float(weight) if sep else 1.0
        except ValueError:
            value = -1.0
        if not name or value < 0:
            raise ValueError(
                f"{what}: write name=weight pairs separated by commas (such as {text!r}), not {part!r}"
            )
        out[name] = value
    if not any(out.values()):
        raise ValueError(f"{what}: at least one weight must be above 0")
    return out


# --------------------------------------------------------------------------------------------------------
# Seat players in process (opponents, evaluation)


# --------------------------------------------------------------------------------------------------------
# Self-play rollouts


SeatMover = Callable[[Game, int], None]
"""A player of a seat that is not learning: plays the decision the seat owes in the game."""

CORE_KINDS = frozenset({"self", "past", "random"})
"""The opponent kinds whose games the native core plays, when it is built: every seat chooses from the
observation vector, the action ids or the count of options, which the core gives without the engine's
state. The bots' games (``greedy``, ``mcts:N``) stay on the engine: a bot reads an observation made from
the engine's state, which the core would have to write out at every one of their decisions (measured in
``docs/performance.md``, 2026-12-07: it costs more than the core saves there)."""


@dataclass
class Slot:
    """One game under way: the game, the learning seats, the players of the others, its opponent kind."""

    game: Game
    """The core's game (:class:`~kutnahora.envs.stepping.CoreGame`) or the engine's, with its own encoder:
    the encoder rewrites only what changed since the seat's last vector, which saves most of the work only
    while it follows one game."""
    learners: set[int]
    others: dict[int, SeatMover]
    kind: str
    rows: dict[int, list[int]]


def _net_mover(player: NetPlayer) -> SeatMover:
    def move(game: Game, seat: int) -> None:
        game.apply(player.index(game.vector(seat), game.ids()))

    return move


def _random_mover(player: RandomOpponent) -> SeatMover:
    def move(game: Game, seat: int) -> None:
        game.apply(player.index(game.count()))

    return move


def _bot_mover(player: SeatPlayer) -> SeatMover:
    def move(game: Game, seat: int) -> None:
        game.apply_option(player(game.state(), seat))

    return move


class Rollouts:
    """Plays many games at once, the learning network deciding their pending decisions in one batch.

    The games of the kinds in :data:`CORE_KINDS` run on the engine :func:`kutnahora.native.active_engine`
    selects (the native core when it is built); the others on the engine. Either way a seed gives the same
    games and the same samples (``tests/envs/test_training_engines.py``)."""

    def __init__(self, config: dict[str, Any], rng: random.Random, pool_dir: Path) -> None:
        self.config = config
        self.rng = rng
        self.layout = ObservationLayout()
        self.space = ActionSpace(self.layout.components)
        self.core: Stepper | None = None
        if active_engine() == NATIVE:
            self.core = CoreStepper(self.layout, self.space, normalized=True)
        self.players = parse_weights(config["players"], "--players")
        self.opponents = parse_weights(config["opponents"], "--opponents")
        self.pool_dir = pool_dir
        self.pool: list[network.PolicyValueNet] = []
        self.slots: list[Slot | None] = []
        self.finished: list[tuple[str, int, float]] = []
        """(opponent kind, players, return of a learning seat) of the games finished since last asked."""

    def load_pool(self) -> None:
        """The past copies saved in the pool folder, oldest first (the last ``pool_size``)."""
        files = sorted(self.pool_dir.glob("*.npz"))[-self.config["pool_size"] :]
        self.pool = [network.load(f) for f in files]

    def add_to_pool(self, net: network.PolicyValueNet, name: str) -> None:
        """Keep a copy of the network as a past opponent (on disk too, for a resumed run)."""
        network.save(net, self.pool_dir / f"{name}.npz")
        self.pool.append(net)
        del self.pool[: -self.config["pool_size"]]

    def _stepper(self, kind: str) -> Stepper:
        if self.core is not None and kind in CORE_KINDS:
            return self.core
        return EngineStepper(self.layout, self.space, normalized=True)  # a game's own encoder

    def _new_slot(self) -> Slot:
        rng = self.rng
        names = list(self.players)
        count = int(rng.choices(names, [self.players[n] for n in names])[0])
        kinds = [k for k in self.opponents if k != "past" or self.pool]
        kind = rng.choices(kinds, [self.opponents[k] for k in kinds])[0]
        game = self._stepper(kind).new(GameOptions(players=count), rng.getrandbits(62))
        if kind == "self":
            return Slot(game, set(range(count)), {}, kind, {s: [] for s in range(count)})
        learner = rng.randrange(count)
        others: dict[int, SeatMover] = {}
        past = rng.choice(self.pool) if kind == "past" else None
        for seat in range(count):
            if seat == learner:
                continue
            if past is not None:
                others[seat] = _net_mover(NetPlayer(past, None, self.space, True, rng.getrandbits(32)))
            elif kind == "random":
                others[seat] = _random_mover(RandomOpponent(rng.getrandbits(32)))
            else:
                others[seat] = _bot_mover(bot_player(kind, rng.getrandbits(32)))
        return Slot(game, {learner}, others, kind, {learner: []})

    def collect(self, model: Any, buffer: Buffer) -> None:
        """Fill ``buffer``: start games until it holds enough samples, then play the last ones out."""
        import torch

        self.slots = [self._new_slot() for _ in range(self.config["games"])]
        while self.slots:
            waiting: list[tuple[Slot, int]] = []
            for i, slot in enumerate(self.slots):
                while slot is not None:
                    game = slot.game
                    seat = game.seat
                    if seat is None:
                        self._finish(slot, buffer)
                        slot = self._new_slot() if not buffer.full() else None
                        self.slots[i] = slot
                        continue
                    if game.count() == 1:
                        game.apply(0)
                        continue
                    if seat in slot.learners:
                        waiting.append((slot, seat))
                        break
                    slot.others[seat](game, seat)
            self.slots = [slot for slot in self.slots if slot is not None]
            if not waiting:
                continue
            vectors = np.stack([slot.game.vector(seat) for slot, seat in waiting])
            masks = np.zeros((len(waiting), self.space.size), dtype=bool)
            id_lists = []
            for row, (slot, _) in enumerate(waiting):
                ids = slot.game.ids()
                id_lists.append(ids)
                masks[row, ids] = True
            with torch.no_grad():
                logits, values = model(torch.from_numpy(vectors))
                logits = logits.masked_fill(~torch.from_numpy(masks), -1e9)
                dist = torch.distributions.Categorical(logits=logits)
                actions = dist.sample()  # type: ignore[no-untyped-call,unused-ignore]
                logps = dist.log_prob(actions)  # type: ignore[no-untyped-call,unused-ignore]
            for row, (slot, seat) in enumerate(waiting):
                action = int(actions[row])
                index = buffer.add(vectors[row], masks[row], action, float(logps[row]), float(values[row]))
                slot.rows[seat].append(index)
                slot.game.apply(id_lists[row].index(action))

    def _finish(self, slot: Slot, buffer: Buffer) -> None:
        result = slot.game.returns()
        for seat, rows in slot.rows.items():
            buffer.end(rows, result[seat])
            self.finished.append((slot.kind, len(result), result[seat]))


class Buffer:
    """The samples of one iteration: vectors, masks, actions, log-probabilities and values as they are
    taken, then each sample's return and advantage once its game has ended.

    At least ``size`` samples are taken; the games under way when that many are reached are played to
    their end (no new game starts), so every sample belongs to a finished game and none is thrown away.
    """

    def __init__(self, size: int, gamma: float, lam: float) -> None:
        self.size = size
        self.vectors: list[npt.NDArray[np.float32]] = []
        self.masks: list[npt.NDArray[np.bool_]] = []
        self.actions: list[int] = []
        self.logps: list[float] = []
        self.values: list[float] = []
        self.returns: dict[int, float] = {}
        self.advantages: dict[int, float] = {}
        self.gamma, self.lam = gamma, lam

    @property
    def count(self) -> int:
        """Samples taken so far."""
        return len(self.actions)

    def full(self) -> bool:
        """Whether enough samples are taken (games under way then play to their end)."""
        return self.count >= self.size

    def add(self, vector: Any, mask: Any, action: int, logp: float, value: float) -> int:
        """One sample; its row."""
        self.vectors.append(vector)
        self.masks.append(mask)
        self.actions.append(action)
        self.logps.append(logp)
        self.values.append(value)
        return self.count - 1

    def end(self, rows: list[int], reward: float) -> None:
        """One seat's game is over with ``reward``: its samples' advantages (GAE) and value targets."""
        following, advantage = 0.0, 0.0
        for position in range(len(rows) - 1, -1, -1):
            r = rows[position]
            last = position == len(rows) - 1
            delta = (reward if last else 0.0) + self.gamma * following - self.values[r]
            advantage = delta + self.gamma * self.lam * advantage
            self.advantages[r] = advantage
            self.returns[r] = advantage + self.values[r]
            following = self.values[r]

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The finished samples as arrays, for the update."""
        rows = sorted(self.returns)
        return {
            "vectors": np.stack([self.vectors[r] for r in rows]),
            "masks": np.stack([self.masks[r] for r in rows]),
            "actions": np.array([self.actions[r] for r in rows], dtype=np.int64),
            "logps": np.array([self.logps[r] for r in rows], dtype=np.float32),
            "returns": np.array([self.returns[r] for r in rows], dtype=np.float32),
            "advantages": np.array([self.advantages[r] for r in rows], dtype=np.float32),
        }


def ppo_update(
    model: Any, optimiser: Any, buffer: Buffer, config: dict[str, Any], rng: np.random.Generator
) -> dict[str, float]:
    """Epochs of clipped PPO over the finished samples; mean losses."""
    import torch

    data = buffer.arrays()
    rows = np.arange(len(data["actions"]))
    stats = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "clip_fraction": 0.0, "kl": 0.0}
    steps = 0
    for _ in range(config["epochs"]):
        order = rng.permutation(rows)
        for start in range(0, len(order), config["minibatch"]):
            batch = order[start : start + config["minibatch"]]
            if len(batch) < 2:
                continue
            x = torch.from_numpy(data["vectors"][batch])
            mask = torch.from_numpy(data["masks"][batch])
            actions = torch.from_numpy(data["actions"][batch])
            old = torch.from_numpy(data["logps"][batch])
            adv = torch.from_numpy(data["advantages"][batch])
            target = torch.from_numpy(data["returns"][batch])
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            logits, values = model(x)
            logits = logits.masked_fill(~mask, -1e9)
            logp_all = torch.log_softmax(logits, -1)
            logp = logp_all.gather(1, actions[:, None]).squeeze(1)
            ratio = torch.exp(logp - old)
            clip = config["clip"]
            policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
            probs = logp_all.exp()
            entropy = -(probs * logp_all.masked_fill(~mask, 0.0)).sum(-1).mean()
            value_loss = ((values - target) ** 2).mean()
            loss = policy_loss + config["value_coef"] * value_loss - config["entropy"] * entropy
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimiser.step()
            with torch.no_grad():
                stats["policy_loss"] += float(policy_loss)
                stats["value_loss"] += float(value_loss)
                stats["entropy"] += float(entropy)
                stats["clip_fraction"] += float(((ratio - 1).abs() > clip).float().mean())
                stats["kl"] += float((old - logp).mean())
            steps += 1
    return {k: round(v / max(steps, 1), 5) for k, v in stats.items()}


# --------------------------------------------------------------------------------------------------------
# The run: checkpoints, evaluations, the curve


RESUMABLE = (
    "samples",
    "players",
    "opponents",
    "lr",
    "entropy",
    "eval_every",
    "eval_games",
    "eval_search_games",
    "checkpoint_minutes",
    "pool_every",
)
"""The options a resumed run takes from its command line when given there (else from ``config.json``);
every command is recorded in ``config.json``."""

SMOKE = {"games": 4, "batch": 512, "minibatch": 128, "epochs": 1, "eval_games": 2, "eval_search_games": 0}


def _configure(args: argparse.Namespace, command: str) -> dict[str, Any] | None:
    """The run's options: read back (with those given again) and the command added, for ``--resume``; else
    written into a new run folder. None, having said why, for a folder that cannot take the run or an
    option that cannot be read."""
    import torch

    folder: Path = args.run
    config_path = folder / "config.json"
    layout = ObservationLayout()
    space = ActionSpace(layout.components)
    if args.resume:
        if not (folder / "checkpoint.pt").exists():
            print(f"kutnahora-train: {folder} holds no checkpoint.pt to resume from", file=sys.stderr)
            return None
        config: dict[str, Any] = json.loads(config_path.read_text())
        for key in RESUMABLE:
            if key in args.given:
                config[key] = getattr(args, key)
        config.setdefault("commands", []).append(command)
        write_json(config_path, config)
    else:
        if occupied(folder):
            return None
        config = {
            key: getattr(args, key)
            for key in (
                "samples",
                "batch",
                "games",
                "epochs",
                "minibatch",
                "lr",
                "entropy",
                "clip",
                "value_coef",
                "gamma",
                "lam",
                "players",
                "opponents",
                "pool_size",
                "pool_every",
                "seed",
                "eval_every",
                "eval_games",
                "eval_search",
                "eval_search_games",
                "checkpoint_minutes",
                "threads",
            )
        }
        config["init"] = args.init
        try:  # read once here, so that a network that cannot be read is refused before the folder is made
            _, config["hidden"] = initial_model(
                args.init, [int(h) for h in args.hidden.split(",")], layout.size, space.size
            )
        except (ValueError, OSError) as error:
            print(f"kutnahora-train: {error}", file=sys.stderr)
            return None
        if args.smoke:
            config.update(SMOKE)
        config["commands"] = [command]
        config["commit"] = git_commit()
        config["started"] = datetime.now(UTC).isoformat(timespec="seconds")
        config["torch"] = torch.__version__
        folder.mkdir(parents=True, exist_ok=True)
        write_json(config_path, config)
    try:
        parse_weights(config["players"], "--players")
        parse_weights(config["opponents"], "--opponents")
    except ValueError as error:
        print(f"kutnahora-train: {error}", file=sys.stderr)
        return None
    return config


def run(args: argparse.Namespace, command: str) -> int:
    """Train (or resume) in the run folder."""
    import torch
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    torch.set_num_threads(args.threads)
    folder: Path = args.run
    config = _configure(args, command)
    if config is None:
        return 2
    (folder / "pool").mkdir(exist_ok=True)
    (folder / "weights").mkdir(exist_ok=True)
    layout = ObservationLayout()
    space = ActionSpace(layout.components)
    torch.manual_seed(config["seed"])  # before a new network's weights are drawn: the seed gives them too
    if args.resume:  # the checkpoint's weights replace these
        model = build_model(layout.size, config["hidden"], space.size)
    else:
        model, _ = initial_model(config["init"], config["hidden"], layout.size, space.size)
    optimiser = torch.optim.Adam(model.parameters(), lr=config["lr"], eps=1e-5)
    rng = random.Random(config["seed"])
    np_rng = np.random.default_rng(config["seed"])
    torch.manual_seed(config["seed"])  # and the sampling's draws start from the seed, as they always have
    iteration, samples, seconds = 0, 0, 0.0
    history: list[dict[str, Any]] = []
    evaluations: list[dict[str, Any]] = []
    rollouts = Rollouts(config, rng, folder / "pool")
    if args.resume:
        saved = torch.load(folder / "checkpoint.pt", weights_only=False)
        model.load_state_dict(saved["model"])
        optimiser.load_state_dict(saved["optimiser"])
        for group in optimiser.param_groups:
            group["lr"] = config["lr"]
        rng.setstate(saved["rng"])
        np_rng.bit_generator.state = saved["np_rng"]
        torch.set_rng_state(saved["torch_rng"])
        iteration, samples, seconds = saved["iteration"], saved["samples"], saved["seconds"]
        history, evaluations = records_until(folder, iteration)
        rollouts.load_pool()
    meta = {"hidden": config["hidden"], "observation": "normalized", "seed": config["seed"]}

    def export(name: str) -> network.PolicyValueNet:
        net = to_numpy(model, {**meta, "iteration": iteration, "samples": samples})
        save_network(net, folder, name)
        return net

    def checkpoint() -> None:
        state = {
            "model": model.state_dict(),
            "optimiser": optimiser.state_dict(),
            "rng": rng.getstate(),
            "np_rng": np_rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "iteration": iteration,
            "samples": samples,
            "seconds": seconds,
        }
        # The records first, the checkpoint last: stopped in between, the records run ahead of the
        # checkpoint, and a resume drops what they hold past it.
        write_json(folder / "history.json", history)
        write_json(folder / "evaluations.json", evaluations)
        draw_curve(history, evaluations, folder / "curve.png")
        torch.save(state, folder / "checkpoint.pt.part")
        os.replace(folder / "checkpoint.pt.part", folder / "checkpoint.pt")

    def evaluate_now() -> None:
        net = export(f"iter-{iteration:05d}")
        started = time.process_time()
        seed = 900_000
        plan = [("greedy", 2, config["eval_games"]), ("greedy", 4, config["eval_games"])]
        for opponent, players, games in plan:
            for sample in (False, True):
                result = evaluate(net, opponent, players, games, sample, seed)
                evaluations.append({"iteration": iteration, "samples": samples, **result})
        if config["eval_search_games"]:
            result = evaluate(net, config["eval_search"], 2, config["eval_search_games"], False, seed)
            evaluations.append({"iteration": iteration, "samples": samples, **result})
        log(
            f"evaluated in {time.process_time() - started:.0f} s CPU: "
            + "; ".join(
                f"{e['policy'][:3]} vs {e['opponent']} {e['players']}p {e['wins']}/{e['games']}"
                for e in evaluations
                if e["iteration"] == iteration
            )
        )

    def log(text: str) -> None:
        progress.console.print(f"[{datetime.now(UTC):%H:%M:%S}] iter {iteration}: {text}")

    last_checkpoint = began = time.monotonic()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,} samples"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        disable=not args.progress,
        transient=False,
    ) as progress:
        task = progress.add_task("training", total=config["samples"], completed=samples)
        while samples < config["samples"]:
            started = time.perf_counter()
            buffer = Buffer(config["batch"], config["gamma"], config["lam"])
            model.eval()
            rollouts.collect(model, buffer)
            collected = time.perf_counter()
            model.train()
            stats = ppo_update(model, optimiser, buffer, config, np_rng)
            iteration += 1
            used = buffer.count
            samples += used
            seconds += time.perf_counter() - started
            by_kind: dict[str, list[float]] = {}
            mean_returns: dict[str, float] = {}
            for kind, players, value in rollouts.finished:
                by_kind.setdefault(f"{kind} {players}p" if kind != "self" else "self", []).append(value)
            rollouts.finished = []
            mean_returns.update({k: round(float(np.mean(v)), 4) for k, v in by_kind.items()})
            entry = {
                "iteration": iteration,
                "samples": samples,
                "seconds": round(seconds, 1),
                "collect_seconds": round(collected - started, 1),
                "update_seconds": round(time.perf_counter() - collected, 1),
                "returns": mean_returns,
                "games": {k: len(v) for k, v in by_kind.items()},
                **stats,
            }
            history.append(entry)
            progress.update(task, completed=min(samples, config["samples"]))
            progress.update(
                task,
                description="training "
                + " ".join(f"{k}:{v:+.2f}" for k, v in sorted(mean_returns.items()) if k != "self"),
            )
            if not args.progress:
                log(
                    f"{samples:,} samples; collect {entry['collect_seconds']} s, update "
                    f"{entry['update_seconds']} s; returns "
                    + " ".join(f"{k} {v:+.2f}" for k, v in sorted(mean_returns.items()))
                    + f"; entropy {stats['entropy']:.2f}"
                )
            if iteration % config["pool_every"] == 0:
                rollouts.add_to_pool(to_numpy(model, meta), f"iter-{iteration:05d}")
            if iteration % config["eval_every"] == 0:
                evaluate_now()
            if time.monotonic() - last_checkpoint > 60 * config["checkpoint_minutes"]:
                export(f"iter-{iteration:05d}")
                checkpoint()
                last_checkpoint = time.monotonic()
                log(f"checkpoint; {samples:,} samples in {seconds / 60:.0f} min")
            if args.minutes > 0 and time.monotonic() - began >= 60 * args.minutes:
                log(f"stopped after {args.minutes:g} minutes (--minutes); --resume goes on")
                break
        if not evaluations or evaluations[-1]["iteration"] != iteration:
            evaluate_now()
        export(f"iter-{iteration:05d}")
        checkpoint()
        log(f"done: {samples:,} samples in {seconds / 60:.1f} min")
    return 0


def add_parser(commands: Any, stamp: str) -> None:
    """``kutnahora-train run``: its options (the command line is :mod:`kutnahora.envs.train`)."""
    train = commands.add_parser(
        "run",
        help="train (or --resume) in a run folder",
        description="Train by PPO: checkpoints, evaluations, the learning curve in the run folder.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_run_arguments(train, f"neural-{stamp}", "the run folder's checkpoint", RESUMABLE)
    train.add_argument(
        "--samples", type=int, default=20_000_000, help="stop after this many training samples"
    )
    train.add_argument("--batch", type=int, default=4096, help="samples per iteration (at least)")
    train.add_argument("--games", type=int, default=24, help="games played at once")
    train.add_argument("--epochs", type=int, default=4, help="PPO epochs per iteration")
    train.add_argument("--minibatch", type=int, default=256, help="samples per gradient step")
    train.add_argument("--lr", type=float, default=3e-4, help="Adam's learning rate")
    train.add_argument("--entropy", type=float, default=0.01, help="entropy bonus")
    train.add_argument("--clip", type=float, default=0.2, help="PPO's ratio clip")
    train.add_argument("--value-coef", type=float, default=0.5, help="weight of the value loss")
    train.add_argument("--gamma", type=float, default=1.0, help="discount per decision")
    train.add_argument("--lam", type=float, default=0.95, help="GAE's lambda")
    train.add_argument("--hidden", default="256,128", help="widths of the trunk's layers")
    train.add_argument(
        "--init",
        default="scratch",
        help="the network to start from: scratch (--hidden), a weights file (.npz, such as the shipped "
        "guide.npz) or a run folder; its trunk's widths replace --hidden",
    )
    train.add_argument("--players", default="2=7,3=1,4=2", help="weights of the player counts")
    train.add_argument(
        "--opponents",
        default="self=5,past=3,greedy=3,mcts:10=0.25",
        help="weights of the opponent kinds: self, past, random, greedy, mcts:N",
    )
    train.add_argument("--pool-size", type=int, default=8, help="past copies kept as opponents")
    train.add_argument("--pool-every", type=int, default=5, help="iterations between past copies")
    train.add_argument("--eval-every", type=int, default=25, help="iterations between evaluations")
    train.add_argument("--eval-games", type=int, default=40, help="games per evaluation against greedy")
    train.add_argument("--eval-search", default="mcts:25", help="the search bot evaluated against")
    train.add_argument("--eval-search-games", type=int, default=10, help="games against it (0: none)")
    train.add_argument("--checkpoint-minutes", type=float, default=5.0, help="minutes between checkpoints")
    train.add_argument("--seed", type=int, default=1, help="seed of the games, the sampling and the network")
    train.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    train.add_argument(
        "--minutes",
        type=float,
        default=0.0,
        help="stop after the iteration that ends past this many minutes of this command, its evaluations "
        "counted (0: no limit); --resume goes on",
    )
    train.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    train.add_argument(
        "--smoke", action="store_true", help="the pipeline end to end in seconds (tiny batches, not learning)"
    )


def command(args: argparse.Namespace, text: str, words: Sequence[str]) -> int:
    """``kutnahora-train run``: train, with the options given again on a resume noted (``words``, the
    command's own arguments)."""
    args.given = {
        key for key in RESUMABLE if any(w.split("=")[0] == "--" + key.replace("_", "-") for w in words)
    }
    if args.smoke and "samples" not in args.given:
        args.samples = 1024
    if args.minutes < 0:
        print("kutnahora-train: --minutes must be 0 (no limit) or more", file=sys.stderr)
        return 2
    return run(args, text)
