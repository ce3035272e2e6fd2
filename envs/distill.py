"""Expert iteration for the neural bot's network: ``kutnahora-train distill``.

**Why.** PPO against a league (:mod:`kutnahora.envs.training`) taught the network to beat greedy, not what
the search bot knows: the policy alone, and the network's own search, lose almost every game to
``mcts:100``. Expert iteration (the AlphaZero recipe) learns from searches instead: the policy is fitted
to the visit distribution of a search at each decision, the value to the game's outcome, and a search
guided by the better network makes better targets for the next round.

**Data.** Self-play games (player counts weighted by ``--players``) in which every seat decides by a
search: the search bot (``--searcher mcts:N``, :func:`kutnahora.clients.bots.mcts.search`) or the
network's own PUCT (``neural:N``, :func:`kutnahora.clients.bots.neural.search`, with the run's current
network: true expert iteration). Each decision with two or more options is a sample: the seat's normalised
observation vector (what the network reads), the legal-action mask, the target policy (the root's visit
counts normalised over the legal actions; zero on every other id) and, once the game is over, the seat's
terminal return (:func:`kutnahora.learned.outcome.returns`), with the search's own value of the position (its
mean backed-up value for the seat, on the returns' scale). The move played is drawn from the visit
distribution for the first ``--explore-moves`` decisions of a game (variety of openings), then it is the
most visited. Game ``i`` of a run has its player count and seed derived from the run's seed and ``i``
alone, so it is the same game whichever worker plays it, and a game is replayed identically after a crash.

Games run in ``--workers`` processes; each finished game is written at once, atomically, as one shard,
``data/game-NNNNNNN.npz`` (observation vectors stored sparse: an observation has about 170 non-zero
entries of 3,886), so a crash or Ctrl-C loses only the games under way, and ``--resume`` plays exactly the
games that have no shard yet.

**Training.** Minibatch Adam over a replay window of the newest ``--window`` samples: cross-entropy of the
policy (logits masked to the legal actions) against the target distribution, plus ``--value-coef`` times
the squared error of the value against a blend of the return and the search's value, ``--search-value``
of the latter (0.5 by default). The return alone is one noisy outcome a game, which a network of a million
weights learns by heart within a few hundred games (a training value loss near 0.01 while its search lost to
``mcts:100``); the search's value differs from position to position of one game and averages over the
draws the search made. The network has the shape of
:mod:`kutnahora.learned.network` and starts from ``--init``: the shipped weights (where PPO got to), a run
folder's checkpoint, or ``scratch``.

**The run folder** is laid out like ``kutnahora-train run``'s (``config.json``, ``checkpoint.pt``,
``latest.npz``, ``weights/iter-NNNNN.npz``, ``history.json``, ``evaluations.json``, ``curve.png``) plus
``data/``; ``kutnahora-train export RUN`` reads it the same way. Every ``--eval-every`` iterations the
policy alone plays greedy (deterministic) and the network's search (``--eval-search``) plays
``--eval-opponent``, two players, ``--eval-games`` games each, with Wilson intervals.

Commands::

    kutnahora-train distill --run RUN                       # hours: generate, train, checkpoint, evaluate
    kutnahora-train distill --run RUN --resume              # go on after a stop or a crash
    kutnahora-train distill --run /tmp/smoke --smoke        # the whole pipeline in seconds, not learning
    kutnahora-train export RUN --to neural.npz              # its latest network → a weights file

Needs the ``train`` extra (PyTorch, rich, matplotlib) to train; generating games needs NumPy only.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from kutnahora.clients.bots import is_bot, neural
from kutnahora.clients.files import write_json
from kutnahora.clients.stopping import INTERRUPTED
from kutnahora.engine import GameState, Option, observe
from kutnahora.envs.matches import SeatPlayer, evaluate, match
from kutnahora.envs.models import build_model, initial_model, save_network, to_numpy
from kutnahora.envs.run_folder import add_run_arguments, draw_curve, git_commit, occupied, records_until
from kutnahora.envs.searched_games import Searcher, Task, generate, learner_plays, plan
from kutnahora.envs.shards import Samples, read_shard, shard_games, shard_path, shard_size
from kutnahora.envs.training import parse_weights
from kutnahora.learned import network
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout

# --------------------------------------------------------------------------------------------------------
# Searches


# --------------------------------------------------------------------------------------------------------
# Samples and shards


# --------------------------------------------------------------------------------------------------------
# Self-play with searches


def held_out(game: int, every: int) -> bool:
    """Whether game number ``game`` is one of those kept out of training to measure it (every
    ``every``-th; none for 0)."""
    return every > 0 and game % every == every - 1


class Replay:
    """The shards of a run's data folder, read once each; the newest samples as one window."""

    def __init__(self, data: Path, actions: int, every: int = 0, held: bool = False) -> None:
        self.data = data
        self.actions = actions
        self.every = every
        self.held = held
        """Whether the window draws from the games held out (:func:`held_out` of ``every``) or the others."""
        self.cache: dict[int, Samples] = {}

    def window(self, size: int) -> Samples:
        """The newest ``size`` samples (of the games with the highest numbers), oldest first."""
        chosen: list[int] = []
        count = 0
        for game in reversed(shard_games(self.data)):
            if held_out(game, self.every) != self.held:
                continue
            if count >= size:
                break
            if game not in self.cache:
                self.cache[game] = read_shard(shard_path(self.data, game))
            chosen.append(game)
            count += len(self.cache[game])
        for game in set(self.cache) - set(chosen):
            del self.cache[game]
        return Samples.join([self.cache[g] for g in reversed(chosen)], self.actions).tail(size)


# --------------------------------------------------------------------------------------------------------
# Training


def losses(
    model: Any, x: Any, mask: Any, target: Any, outcome: Any, value_coef: float
) -> tuple[Any, Any, Any]:
    """(total, policy, value) losses of a batch: the cross-entropy of the policy masked to the legal
    actions against the target distribution, and the squared error of the value against the return."""
    logits, values = model(x)
    policy, value = output_losses(logits, values, mask, target, outcome)
    return policy + value_coef * value, policy, value


def output_losses(logits: Any, values: Any, mask: Any, target: Any, outcome: Any) -> tuple[Any, Any]:
    """The mean (policy, value) losses of a batch the model has read: the cross-entropy of the logits
    masked to the legal actions against the target distribution, the value's squared error."""
    import torch

    logp = torch.log_softmax(logits.masked_fill(~mask, -1e9), -1)
    policy = -(target * logp.masked_fill(~mask, 0.0)).sum(-1).mean()
    return policy, ((values - outcome) ** 2).mean()


def train_epochs(
    model: Any,
    optimiser: Any,
    samples: Samples,
    inputs: int,
    epochs: int,
    minibatch: int,
    value_coef: float,
    rng: np.random.Generator,
    search_value: float = 0.0,
) -> dict[str, float]:
    """Epochs of minibatch steps over the samples, the value fitted to the returns blended with
    ``search_value`` of the searches' values; the mean losses, and the targets' mean entropy (the
    policy loss's floor: the loss minus it is the policy's divergence from the searches)."""
    import torch

    stats = {"policy_loss": 0.0, "value_loss": 0.0}
    steps = 0
    model.train()
    for _ in range(epochs):
        order = rng.permutation(len(samples))
        for start in range(0, len(order), minibatch):
            rows = order[start : start + minibatch]
            if len(rows) < 2:
                continue
            x = torch.from_numpy(samples.vectors(rows, inputs))
            mask = torch.from_numpy(samples.masks[rows])
            target = torch.from_numpy(samples.targets[rows])
            outcome = torch.from_numpy(
                (1.0 - search_value) * samples.returns[rows] + search_value * samples.searched[rows]
            )
            loss, policy, value = losses(model, x, mask, target, outcome, value_coef)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            stats["policy_loss"] += float(policy.detach())
            stats["value_loss"] += float(value.detach())
            steps += 1
    t = samples.targets
    entropy = float(-(t * np.log(np.where(t > 0, t, 1.0))).sum(-1).mean()) if len(samples) else 0.0
    out = {k: round(v / max(steps, 1), 5) for k, v in stats.items()}
    out["target_entropy"] = round(entropy, 5)
    out["steps"] = steps
    return out


def measure(model: Any, samples: Samples, inputs: int, batch: int = 1024) -> dict[str, float]:
    """The losses of samples the model was not trained on: the policy's cross-entropy against the
    searches' distributions and the value's squared error against the returns (what it is to predict),
    with how often the value's sign is the return's (of the samples whose return is not 0)."""
    import torch

    policy = value = 0.0
    signs = decided = 0
    model.eval()
    with torch.no_grad():
        for start in range(0, len(samples), batch):
            rows = np.arange(start, min(start + batch, len(samples)))
            logits, values = model(torch.from_numpy(samples.vectors(rows, inputs)))
            outcome = torch.from_numpy(samples.returns[rows])
            policy_mean, value_mean = output_losses(
                logits,
                values,
                torch.from_numpy(samples.masks[rows]),
                torch.from_numpy(samples.targets[rows]),
                outcome,
            )
            policy += float(policy_mean) * len(rows)
            value += float(value_mean) * len(rows)
            signs += int(((values > 0) == (outcome > 0))[outcome != 0].sum())
            decided += int((outcome != 0).sum())
    model.train()
    count = max(len(samples), 1)
    return {
        "policy_loss": round(policy / count, 5),
        "value_loss": round(value / count, 5),
        "value_sign": round(signs / max(decided, 1), 4),
        "samples": len(samples),
    }


def search_player(net: network.PolicyValueNet, searcher: Searcher, seed: int) -> SeatPlayer:
    """The network's PUCT search (``searcher`` gives its budget) as a seat player in process."""
    evaluator = neural.Evaluator(net, ObservationLayout())

    def play(state: GameState, seat: int) -> Option:
        rng = random.Random(f"{seed}:{state.version}")
        view = observe(state, seat)
        return neural.search(
            view, evaluator, rng, simulations=searcher.iterations, budget_ms=searcher.budget_ms
        ).option

    return play


# --------------------------------------------------------------------------------------------------------
# The command

RESUMABLE = (
    "iterations",
    "learner_games",
    "held_out",
    "search_value",
    "value_coef",
    "eval_search",
    "eval_opponent",
    "games_per_iteration",
    "epochs",
    "window",
    "lr",
    "searcher",
    "explore_moves",
    "workers",
    "eval_every",
    "eval_games",
    "threads",
)
"""The options a resumed run takes from its command line when given there (else from ``config.json``)."""

SMOKE = {
    "iterations": 2,
    "games_per_iteration": 2,
    "searcher": "mcts:4",
    "workers": 1,
    "epochs": 1,
    "minibatch": 64,
    "window": 5000,
    "eval_every": 2,
    "eval_games": 2,
    "eval_search": "neural:4",
    "eval_opponent": "mcts:4",
    "players": "2=1",
}
"""``--smoke``: the whole pipeline in seconds (options given on the command line still win)."""

CONFIG = (
    "iterations",
    "games_per_iteration",
    "epochs",
    "minibatch",
    "lr",
    "value_coef",
    "search_value",
    "held_out",
    "learner_games",
    "window",
    "players",
    "searcher",
    "explore_moves",
    "workers",
    "eval_every",
    "eval_games",
    "eval_search",
    "eval_opponent",
    "init",
    "seed",
    "threads",
)


def add_parser(commands: Any, stamp: str) -> None:
    """The ``distill`` subcommand of ``kutnahora-train``."""
    parser = commands.add_parser(
        "distill",
        help="expert iteration: fit the network to searches' visit counts and game outcomes",
        description="Expert iteration: self-play games decided by searches, the network's policy fitted to "
        "their visit distributions and its value to the outcomes; checkpoints, evaluations, the curve and "
        "the searched samples (data/) in the run folder.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_run_arguments(parser, f"distill-{stamp}", "the run folder's checkpoint and shards", RESUMABLE)
    parser.add_argument("--iterations", type=int, default=100, help="generate-and-train rounds")
    parser.add_argument("--games-per-iteration", type=int, default=16, help="self-play games per round")
    parser.add_argument(
        "--searcher",
        default="mcts:200",
        help="the search deciding every seat: mcts:N (the search bot) or neural:N (the current network's "
        "PUCT: expert iteration proper)",
    )
    parser.add_argument(
        "--explore-moves",
        type=int,
        default=10,
        help="decisions of a game played by sampling the visit distribution (then the most visited)",
    )
    parser.add_argument("--players", default="2=1", help="weights of the player counts")
    parser.add_argument(
        "--learner-games",
        type=float,
        default=0.0,
        help="share of the games whose moves the network itself plays (its favourite, after the explored "
        "ones), every decision still searched for its target: the positions the network's own play reaches",
    )
    parser.add_argument(
        "--held-out",
        type=int,
        default=10,
        help="every N-th game is kept out of training, to measure the losses on games the network has not "
        "learned (0: none)",
    )
    parser.add_argument("--workers", type=int, default=2, help="processes playing games")
    parser.add_argument("--window", type=int, default=200_000, help="newest samples trained on")
    parser.add_argument("--epochs", type=int, default=2, help="passes over the window per round")
    parser.add_argument("--minibatch", type=int, default=256, help="samples per gradient step")
    parser.add_argument("--lr", type=float, default=3e-4, help="Adam's learning rate")
    parser.add_argument("--value-coef", type=float, default=1.0, help="weight of the value loss")
    parser.add_argument(
        "--search-value",
        type=float,
        default=0.5,
        help="share of the value's target taken from the searches' values (the rest from the returns)",
    )
    parser.add_argument(
        "--init",
        default=str(network.WEIGHTS),
        help="start from a weights .npz, a run folder's checkpoint, or scratch",
    )
    parser.add_argument("--hidden", default="256,128", help="widths of the trunk's layers (--init scratch)")
    parser.add_argument("--eval-every", type=int, default=5, help="rounds between evaluations")
    parser.add_argument("--eval-games", type=int, default=10, help="games per evaluation match")
    parser.add_argument("--eval-search", default="neural:100", help="the network's search evaluated")
    parser.add_argument("--eval-opponent", default="mcts:100", help="the bot the search is evaluated against")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games and the network's training")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument(
        "--minutes",
        type=float,
        default=0.0,
        help="stop after the iteration that ends past this many minutes of this command (0: no limit); "
        "--resume goes on",
    )
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    parser.add_argument(
        "--smoke", action="store_true", help="the pipeline end to end in seconds (tiny budgets, not learning)"
    )


def command(args: argparse.Namespace, text: str, words: Sequence[str]) -> int:
    """``kutnahora-train distill``: generate, train, checkpoint and evaluate in the run folder."""
    given = {
        k for k in (*CONFIG, "hidden") if any(w.split("=")[0] == "--" + k.replace("_", "-") for w in words)
    }
    if args.smoke:
        for key, value in SMOKE.items():
            if key not in given:
                setattr(args, key, value)
    if args.minutes < 0:
        print("kutnahora-train: --minutes must be 0 (no limit) or more", file=sys.stderr)
        return 2
    try:
        return _run(args, text, given)
    except ValueError as error:
        print(f"kutnahora-train: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        games = len(shard_games(args.run / "data"))
        print(
            f"kutnahora-train: stopped; the {games:,} games written in {args.run / 'data'} are kept, "
            "--resume goes on from the last checkpoint",
            file=sys.stderr,
        )
        return INTERRUPTED


def _configure(args: argparse.Namespace, text: str, given: set[str]) -> dict[str, Any] | None:
    """The run's configuration: a new one, or the saved one with what is given again (``None``: refused,
    said on stderr)."""
    folder: Path = args.run
    config_path = folder / "config.json"
    if args.resume:
        if not (folder / "checkpoint.pt").exists():
            print(f"kutnahora-train: {folder} holds no checkpoint.pt to resume from", file=sys.stderr)
            return None
        config: dict[str, Any] = json.loads(config_path.read_text())
        config.setdefault("search_value", 0.0)  # a run begun before searches' values were kept
        config.setdefault("held_out", 0)
        config.setdefault("learner_games", 0.0)
        for key in RESUMABLE:
            if key in given:
                config[key] = getattr(args, key)
        config.setdefault("commands", []).append(text)
        return config
    if occupied(folder):
        return None
    config = {key: getattr(args, key) for key in CONFIG}
    config["hidden"] = [int(h) for h in args.hidden.split(",")]
    config["method"] = "distill"
    config["commands"] = [text]
    config["commit"] = git_commit()
    config["started"] = datetime.now(UTC).isoformat(timespec="seconds")
    return config


def _run(args: argparse.Namespace, text: str, given: set[str]) -> int:
    import torch
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    config = _configure(args, text, given)
    if config is None:
        return 2
    players, searcher, eval_search = _checked(config)
    torch.set_num_threads(config["threads"])
    run = DistillRun(args, config, players, searcher, eval_search)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,} games"),
        TextColumn("{task.fields[samples]:,} samples, {task.fields[rate]:.1f}/s"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        disable=not args.progress,
        transient=False,
    )
    return run.run(progress)


def _checked(config: dict[str, Any]) -> tuple[dict[str, float], Searcher, Searcher]:
    """The run's player counts (by weight), searcher and evaluation search; :class:`ValueError` naming the
    option when one is out of range."""
    players = parse_weights(config["players"], "--players")
    if not set(players) <= {"2", "3", "4"}:
        raise ValueError(f"--players: the player counts are 2, 3 and 4, not {config['players']!r}")
    if config["held_out"] < 0 or config["held_out"] == 1:
        raise ValueError(
            "--held-out keeps every N-th game out of training, N 0 (none) or 2 and up, "
            f"not {config['held_out']}"
        )
    if not 0.0 <= config["learner_games"] <= 1.0:
        raise ValueError(f"--learner-games is a share between 0 and 1, not {config['learner_games']}")
    if not 0.0 <= config["search_value"] <= 1.0:
        raise ValueError(f"--search-value is a share between 0 and 1, not {config['search_value']}")
    searcher = Searcher.parse(config["searcher"])
    eval_search = Searcher.parse(config["eval_search"])
    if eval_search.kind != "neural":
        raise ValueError(f"--eval-search is the network's search, neural:N, not {config['eval_search']!r}")
    if not is_bot(config["eval_opponent"]):
        raise ValueError(f"--eval-opponent {config['eval_opponent']!r} is not a built-in bot")
    return players, searcher, eval_search


class DistillRun:
    """One distillation run in its folder: the model and its optimiser, the counts a checkpoint keeps, the
    records (history and evaluations), and the steps of an iteration (generate, train, measure, record,
    export, evaluate, checkpoint). Made from a checked configuration; the folder is set up (and a resumed
    run read back) when it is made."""

    def __init__(
        self,
        args: argparse.Namespace,
        config: dict[str, Any],
        players: dict[str, float],
        searcher: Searcher,
        eval_search: Searcher,
    ) -> None:
        import torch

        self.args = args
        self.config = config
        self.players = players
        self.searcher = searcher
        self.eval_search = eval_search
        self.folder: Path = args.run
        self.data = self.folder / "data"
        self.layout = ObservationLayout()
        self.space = ActionSpace(self.layout.components)
        if args.resume:
            self.model = build_model(self.layout.size, config["hidden"], self.space.size)
        else:
            self.model, config["hidden"] = initial_model(
                config["init"], config["hidden"], self.layout.size, self.space.size
            )
            config["torch"] = torch.__version__
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "weights").mkdir(exist_ok=True)
        self.data.mkdir(exist_ok=True)
        write_json(self.folder / "config.json", config)
        self.optimiser = torch.optim.Adam(self.model.parameters(), lr=config["lr"])
        self.np_rng = np.random.default_rng(config["seed"])
        torch.manual_seed(config["seed"])
        self.iteration, self.games, self.samples, self.seconds = 0, 0, 0, 0.0
        self.history: list[dict[str, Any]] = []
        self.evaluations: list[dict[str, Any]] = []
        if args.resume:
            saved = torch.load(self.folder / "checkpoint.pt", weights_only=False)
            self.model.load_state_dict(saved["model"])
            self.optimiser.load_state_dict(saved["optimiser"])
            self.np_rng.bit_generator.state = saved["np_rng"]
            torch.set_rng_state(saved["torch_rng"])
            self.iteration, self.games, self.seconds = saved["iteration"], saved["games"], saved["seconds"]
            self.history, self.evaluations = records_until(self.folder, self.iteration)
        for group in self.optimiser.param_groups:
            group["lr"] = config["lr"]
        self.meta = {
            "hidden": config["hidden"],
            "observation": "normalized",
            "seed": config["seed"],
            "method": "distill",
        }
        self.progress: Any = None  # the bar, while the run goes on (see run)
        self.task: Any = None
        self.made, self.made_seconds, self.generating_since = 0, 0.0, 0.0

    # --- the run's files -------------------------------------------------------------------------------

    def weights_of(self, at: int) -> Path:
        """The network file of iteration ``at``."""
        return self.folder / "weights" / f"iter-{at:05d}.npz"

    def export(self) -> network.PolicyValueNet:
        """The current network, written as this iteration's weights."""
        net = to_numpy(self.model, {**self.meta, "iteration": self.iteration, "samples": self.samples})
        save_network(net, self.folder, f"iter-{self.iteration:05d}")
        return net

    def checkpoint(self) -> None:
        """Write the records, the curve and then the checkpoint (atomically)."""
        import torch

        state = {
            "model": self.model.state_dict(),
            "optimiser": self.optimiser.state_dict(),
            "np_rng": self.np_rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "iteration": self.iteration,
            "games": self.games,
            "samples": self.samples,
            "seconds": self.seconds,
            "seed": self.config["seed"],
        }
        write_json(self.folder / "history.json", self.history)  # the records first (records_until)
        write_json(self.folder / "evaluations.json", self.evaluations)
        draw_curve(
            self.history,
            self.evaluations,
            self.folder / "curve.png",
            series="losses",
            ylabel="training loss\n(average of the last five iterations)",
            label="{}",
            limits=None,
            xlabel="searched samples generated",
        )
        torch.save(state, self.folder / "checkpoint.pt.part")
        (self.folder / "checkpoint.pt.part").replace(self.folder / "checkpoint.pt")

    # --- what the run says -----------------------------------------------------------------------------

    def log(self, line: str) -> None:
        """A line above the bar, stamped with the time and the iteration."""
        self.progress.console.print(f"[{datetime.now(UTC):%H:%M:%S}] iter {self.iteration}: {line}")

    def done(self, game: int, count: int) -> None:
        """A game written: the bar's games, samples and samples per second (of this session's generation)."""
        self.samples += count
        self.made += count
        rate = self.made / max(self.made_seconds + time.perf_counter() - self.generating_since, 1e-9)
        self.progress.update(self.task, advance=1, samples=self.samples, rate=rate)

    # --- the loop --------------------------------------------------------------------------------------

    def run(self, progress: Any) -> int:
        """Iterate until the configured iterations are done or ``--minutes`` are up, with ``progress`` (a
        rich progress bar) shown."""
        config = self.config
        existing = {g: shard_size(shard_path(self.data, g)) for g in shard_games(self.data)}
        self.samples = sum(existing.values())
        if not self.args.resume:
            self.export()
            self.checkpoint()
        elif not self.weights_of(self.iteration).exists():  # a run folder copied without its weights/
            self.export()
        total = config["iterations"] * config["games_per_iteration"]
        with progress:
            self.progress = progress
            self.task = progress.add_task(
                "distill", total=total, completed=min(len(existing), total), samples=self.samples, rate=0.0
            )
            if existing:
                self.log(f"{len(existing):,} games, {self.samples:,} samples in {self.data}")
            began = time.monotonic()
            while self.iteration < config["iterations"]:
                if self.args.minutes > 0 and time.monotonic() - began >= 60 * self.args.minutes:
                    self.log(f"stopped after {self.args.minutes:g} minutes (--minutes); --resume goes on")
                    break
                self.iterate()
            self.log(f"done: {self.games:,} games, {self.samples:,} samples in {self.seconds / 60:.1f} min")
        return 0

    def tasks(self) -> list[Task]:
        """The games of the next iteration, each with its player count, seed and players."""
        config = self.config
        tasks = []
        for game in range(self.games, self.games + config["games_per_iteration"]):
            count, seed = plan(config["seed"], game, self.players)
            learner = learner_plays(config["seed"], game, config["learner_games"])
            tasks.append(
                Task(
                    game,
                    count,
                    seed,
                    str(self.searcher),
                    config["explore_moves"],
                    str(self.data),
                    str(self.weights_of(self.iteration))
                    if self.searcher.kind == "neural" or learner
                    else None,
                    learner,
                )
            )
        return tasks

    def iterate(self) -> None:
        """One iteration: generate its games, train on the window, measure the held-out games, record,
        export the network, evaluate it when due, and checkpoint."""
        config = self.config
        started = self.generating_since = time.perf_counter()
        tasks = self.tasks()
        before = self.samples
        generate(tasks, config["workers"], self.done)
        generated = time.perf_counter()
        self.made_seconds += generated - started
        self.games += config["games_per_iteration"]
        every = config["held_out"]
        window = Replay(self.data, self.space.size, every).window(config["window"])
        stats = train_epochs(
            self.model,
            self.optimiser,
            window,
            self.layout.size,
            config["epochs"],
            config["minibatch"],
            config["value_coef"],
            self.np_rng,
            config["search_value"],
        )
        self.iteration += 1
        measured = self.held_out_measure(every)
        self.seconds += time.perf_counter() - started
        entry = {
            "iteration": self.iteration,
            "games": self.games,
            "samples": self.samples,
            "window": len(window),
            "seconds": round(self.seconds, 1),
            "generate_seconds": round(generated - started, 1),
            "train_seconds": round(time.perf_counter() - generated, 1),
            "samples_per_second": round((self.samples - before) / max(generated - started, 1e-9), 2),
            **stats,
            "losses": {
                "policy": stats["policy_loss"],
                "value": stats["value_loss"],
                "targets' entropy (the policy loss's floor)": stats["target_entropy"],
                **(
                    {
                        "held-out games' policy": measured["policy_loss"],
                        "held-out games' value (against the returns)": measured["value_loss"],
                    }
                    if measured
                    else {}
                ),
            },
        }
        if measured:
            entry["held_out"] = measured
        self.history.append(entry)
        if not self.args.progress:
            self.log(
                f"{self.games:,} games, {self.samples:,} samples ({entry['samples_per_second']}/s); policy "
                f"loss {stats['policy_loss']:.3f} (targets' entropy {stats['target_entropy']:.3f}), value "
                f"loss {stats['value_loss']:.3f}"
                + (
                    f"; held out ({measured['samples']:,} samples): policy "
                    f"{measured['policy_loss']:.3f}, value {measured['value_loss']:.3f} "
                    f"(sign right {measured['value_sign']:.0%})"
                    if measured
                    else ""
                )
            )
        net = self.export()
        if self.iteration % config["eval_every"] == 0 or self.iteration == config["iterations"]:
            self.evaluate_now(net)
        self.checkpoint()

    def held_out_measure(self, every: int) -> dict[str, float] | None:
        """The losses on the held-out games (every ``every``-th), or None when none are kept or played."""
        if not every:
            return None
        held = Replay(self.data, self.space.size, every, held=True).window(self.config["window"] // every)
        measured = measure(self.model, held, self.layout.size)
        if not measured["samples"]:
            return None  # no held-out game played yet
        return measured

    def evaluate_now(self, net: network.PolicyValueNet) -> None:
        """The policy alone against greedy, and the network's search against the evaluation opponent."""
        started = time.process_time()
        seed, count = 900_000, self.config["eval_games"]
        eval_search = self.eval_search
        found = [
            evaluate(net, "greedy", 2, count, False, seed),
            match(
                lambda game: search_player(net, eval_search, seed + game),
                f"search {eval_search}",
                self.config["eval_opponent"],
                2,
                count,
                seed,
            ),
        ]
        self.evaluations.extend({"iteration": self.iteration, "samples": self.samples, **e} for e in found)
        self.log(
            f"evaluated in {time.process_time() - started:.0f} s CPU: "
            + "; ".join(f"{e['policy']} vs {e['opponent']} {e['wins']}/{e['games']}" for e in found)
        )
