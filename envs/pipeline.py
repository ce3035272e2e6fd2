"""The neural bots' networks from scratch with one command: ``kutnahora-train pipeline``.

The shipped networks were made in three steps, and the pipeline makes them the same way, in one run
folder, stage after stage, each stage in a folder of its own and each resumable as the command it runs is:

1. ``ppo/``: ``kutnahora-train run``, PPO from scratch against a league, to ``--ppo-samples`` samples;
   its last iteration is exported to ``start.npz``, the network expert iteration starts from.
2. ``distill/``: ``kutnahora-train distill`` from ``start.npz``, every seat decided by ``--searcher``,
   up to ``--distill-iterations`` rounds, half of the games' moves the network's own (``--learner-games``),
   for what ``--hours`` leaves after the stages before and the reserve of the two after it; exported to
   ``guide.npz``, the guide ``neural-mcts`` searches with.
3. ``polish/``: ``kutnahora-train run`` again, PPO from ``guide.npz`` against a league leaning on greedy
   with more four-player games (:data:`POLISH_LEAGUE`), for ``--polish-minutes``, its policy evaluated
   against greedy at two and four players every few iterations; the iteration that won most of those
   games, both counts together (:func:`best_policy_iteration`: a PPO policy's strength swings from one
   iteration to the next), is exported to ``neural.npz``, the network ``neural`` plays (with
   ``neural.json``, the commands that made it).
4. ``match.json`` and ``policy.json``: the strength ladder, ``--match-bots`` (``neural-mcts:110`` with the
   new guide against ``mcts:100``) for ``--match-games`` two-player games, and the new policy alone
   against greedy for ``--policy-games``, ``--workers`` games at once: a first reading, not the 400-game
   measurement.

The evaluations the polish stage chooses by are engine seeds 900,000 onwards; measure the chosen policy on
other seeds (docs/bots.md's table of seeds).

``pipeline.json`` records every stage's commands and the wall-clock seconds spent in it over every
invocation, so the run's cost is read off it after any number of stops. An invocation killed outright
(SIGKILL, a crash, the machine's end) records no seconds; the stage's start is on disk while it runs, and
``--resume`` counts the time from it to the last file the run wrote (:func:`recover_unrecorded`).
``--resume`` goes on from the first stage not done: a stage with a checkpoint resumes from it, one
stopped before its first checkpoint starts again. Nothing is written outside the run folder; the shipped
networks are replaced only by the ``kutnahora-train export`` commands printed at the end.

Commands::

    kutnahora-train pipeline --run runs/guided-1              # about three hours on two cores
    kutnahora-train pipeline --run runs/guided-1 --resume     # go on after a stop or a crash
    kutnahora-train pipeline --run /tmp/smoke --smoke         # every stage in a minute, not learning
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

STAGES = ("ppo", "distill", "polish", "match")

RESERVE_MINUTES = 15
"""Minutes of ``--hours`` the stages before the match leave: the match's (about 8 with the defaults) and
an iteration under way at a deadline (about 5)."""

PPO_EVALUATIONS = ["--eval-every", "1000", "--eval-games", "40", "--eval-search-games", "0"]
"""The first PPO stage's evaluation (the full run's): once, at its end, 40 games at two and at four
players against greedy; a record of where expert iteration starts from, not a choice."""

POLISH_LEAGUE = [
    "--players",
    "2=4,3=1,4=5",
    "--opponents",
    "greedy=6,self=2,past=2,mcts:10=0.5",
    "--lr",
    "1e-4",
    "--entropy",
    "0.005",
]
"""The polish stage's league: greedy most of all, four-player games half of them, a small step."""

POLISH_EVALUATIONS = ["--eval-every", "6", "--eval-games", "100", "--eval-search-games", "0"]
"""The polish stage's evaluations: every 6th iteration, 100 games at two and at four players against
greedy (the same games each time, seeds 900,000 onwards), from which :func:`best_policy_iteration`
chooses."""

SMOKE_MATCH = "neural-mcts:4,mcts:4"
"""The smoke run's match: the same bots with tiny budgets."""


def add_parser(commands: Any, stamp: str) -> None:
    """The ``pipeline`` subcommand of ``kutnahora-train``."""
    parser = commands.add_parser(
        "pipeline",
        help="both networks from scratch: PPO (neural's), then expert iteration from it (neural-mcts's "
        "guide), then a first match",
        description="From scratch to both networks in one run folder: PPO self-play (ppo/ → neural.npz, "
        "the network neural plays), expert iteration from it (distill/ → guide.npz, the guide neural-mcts "
        "searches with), then a short match of the guided search against mcts:100 and of the policy "
        "against greedy. Every stage resumes.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--run", type=Path, default=Path("kutnahora-runs") / f"pipeline-{stamp}", help="run folder"
    )
    parser.add_argument(
        "--resume", action="store_true", help="go on from the first stage not done, with the run's options"
    )
    parser.add_argument("--ppo-samples", type=int, default=115_000, help="PPO's training samples")
    parser.add_argument(
        "--distill-iterations", type=int, default=29, help="expert iteration's rounds, at most"
    )
    parser.add_argument(
        "--polish-minutes", type=float, default=60.0, help="minutes of PPO from the guide (polish/)"
    )
    parser.add_argument(
        "--searcher", default="mcts:100", help="the search whose visit counts the guide learns"
    )
    parser.add_argument(
        "--learner-games", type=float, default=0.5, help="share of distill games the network moves in"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="processes playing distill's games and the match's"
    )
    parser.add_argument("--match-bots", default="neural-mcts:110,mcts:100", help="the first match's bots")
    parser.add_argument("--match-games", type=int, default=20, help="two-player games of the match (0: none)")
    parser.add_argument(
        "--policy-games", type=int, default=40, help="two-player games of the policy against greedy (0: none)"
    )
    parser.add_argument(
        "--hours",
        type=float,
        default=3.0,
        help="the whole run's budget: expert iteration stops early (after an iteration) to leave "
        f"--polish-minutes and {RESERVE_MINUTES} minutes for the match, and the polish stage stops early "
        "to leave the match its minutes",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of every stage")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    parser.add_argument(
        "--smoke", action="store_true", help="every stage in about a minute (tiny budgets, not learning)"
    )


OPTIONS = (
    "ppo_samples",
    "distill_iterations",
    "polish_minutes",
    "searcher",
    "learner_games",
    "workers",
    "match_bots",
    "match_games",
    "policy_games",
    "hours",
    "seed",
    "smoke",
)
"""The options a run keeps in ``pipeline.json``: ``--resume`` plays the rest with them."""


def stage_arguments(config: dict[str, Any], folder: Path, progress: bool) -> dict[str, list[str]]:
    """The arguments of each stage's command (``kutnahora-train run`` and ``distill``; the match's are the
    ladder's), from the run's options."""
    quiet = [] if progress else ["--no-progress"]
    smoke = ["--smoke"] if config["smoke"] else []
    seed = ["--seed", str(config["seed"])]
    ppo = ["run", "--run", str(folder / "ppo"), *seed, *quiet, *smoke]
    if not config["smoke"]:
        ppo += ["--samples", str(config["ppo_samples"]), *PPO_EVALUATIONS]
    rounds = str(config["distill_iterations"])
    distill = [
        "distill",
        "--run",
        str(folder / "distill"),
        "--init",
        str(folder / "start.npz"),
        "--learner-games",
        str(config["learner_games"]),
        *seed,
        *quiet,
        *smoke,
    ]
    if not config["smoke"]:
        # One evaluation, at the end: the match after it measures the bot the guide is for.
        distill += ["--searcher", config["searcher"], "--iterations", rounds]
        distill += ["--workers", str(config["workers"]), "--eval-every", rounds, "--eval-games", "4"]
    polish = ["run", "--run", str(folder / "polish"), "--init", str(folder / "guide.npz"), *seed, *quiet]
    polish += [*smoke, *POLISH_LEAGUE]
    if not config["smoke"]:
        polish += ["--samples", str(POLISH_SAMPLES), *POLISH_EVALUATIONS]
    return {"ppo": ppo, "distill": distill, "polish": polish}


POLISH_SAMPLES = 5_000_000
"""The polish stage's samples: a bound its minutes end it long before."""


def best_policy_iteration(ppo: Path, players: tuple[int, ...] = (2, 4)) -> tuple[int, float] | None:
    """The PPO run's iteration whose policy, played deterministically, won the largest share of its
    evaluation games against greedy at ``players`` (the counts together; the later of equals), and that
    share; ``None`` when the run evaluated none at every count whose network it kept
    (``weights/iter-NNNNN.npz``)."""
    path = ppo / "evaluations.json"
    if not path.exists():
        return None
    won: dict[int, list[int]] = {}
    for row in json.loads(path.read_text()):
        if (
            row["opponent"] == "greedy"
            and row["players"] in players
            and row["policy"] == "deterministic"
            and (ppo / "weights" / f"iter-{row['iteration']:05d}.npz").exists()
        ):
            won.setdefault(int(row["iteration"]), [0, 0, 0])
            counts = won[row["iteration"]]
            counts[0] += row["wins"]
            counts[1] += row["games"]
            counts[2] += 1
    complete = {i: c for i, c in won.items() if c[2] == len(players) and c[1] > 0}
    if not complete:
        return None
    best = max(complete, key=lambda i: (complete[i][0] / complete[i][1], i))
    return best, complete[best][0] / complete[best][1]


def distill_minutes(config: dict[str, Any], spent_seconds: float) -> float:
    """The minutes expert iteration may take: what ``--hours`` leaves after the time spent so far, the
    polish stage's minutes and the reserve (at least one, so that a run over its budget still makes an
    iteration)."""
    left = 60 * float(config["hours"]) - spent_seconds / 60 - float(config["polish_minutes"])
    return max(1.0, left - RESERVE_MINUTES)


def polish_minutes(config: dict[str, Any], spent_seconds: float, polished_seconds: float = 0.0) -> float:
    """The minutes the polish stage may take in this invocation: what is left of ``--polish-minutes``
    after ``polished_seconds`` (its earlier invocations', counted in ``spent_seconds`` too), or less if the
    stages before went over their share of ``--hours`` (at least one)."""
    left = 60 * float(config["hours"]) - spent_seconds / 60 - RESERVE_MINUTES
    return max(1.0, min(float(config["polish_minutes"]) - polished_seconds / 60, left))


def match_arguments(config: dict[str, Any], folder: Path) -> list[list[str]]:
    """The ladder's arguments for the first match and the policy's games against greedy (those asked)."""
    networks = ["--weights", str(folder / "neural.npz"), "--guide", str(folder / "guide.npz")]
    games = [config["match_games"], config["policy_games"]]
    if config["smoke"]:
        games = [min(g, 2) for g in games]
    bots = SMOKE_MATCH if config["smoke"] else config["match_bots"]
    common = ["--seed", str(config["seed"]), "--workers", str(config["workers"])]
    ladders = []
    if games[0]:
        match = ["--bots", bots, "--players", "2", "--games", str(games[0]), *common]
        ladders.append([*match, *networks, "--json", str(folder / "match.json")])
    if games[1]:
        policy = [
            "--bots",
            "neural",
            "--field",
            "greedy",
            "--players",
            "2",
            "--games",
            str(games[1]),
            *common,
        ]
        ladders.append([*policy, *networks, "--json", str(folder / "policy.json")])
    return ladders


def recover_unrecorded(record: dict[str, Any], folder: Path) -> list[str]:
    """Count the time of stage invocations that ended without recording it, and say so.

    A stage under way holds ``running_since`` (epoch seconds) in the record; a stop that records its
    seconds removes it. One left in a record being resumed was killed: its time is counted from then to
    the newest file written in the run folder since (a checkpoint, a game, a report), which undercounts by
    at most the gap between two such writes. Returns a sentence per stage so counted."""
    said: list[str] = []
    killed = {
        name: stage.pop("running_since")
        for name, stage in record["stages"].items()
        if "running_since" in stage
    }
    if not killed:
        return said
    newest = max(
        (p.stat().st_mtime for p in folder.rglob("*") if p.is_file() and p.name != "pipeline.json"),
        default=0.0,
    )
    for name, since in killed.items():
        stage = record["stages"][name]
        seconds = max(0.0, newest - since)
        stage["seconds"] = round(stage["seconds"] + seconds, 1)
        stage["unrecorded_seconds"] = round(stage.get("unrecorded_seconds", 0.0) + seconds, 1)
        said.append(
            f"stage {name}'s last invocation ended without recording its time (killed?): counting "
            f"{seconds:,.0f} s, from its start to the last file it wrote"
        )
    return said


def _configure(args: argparse.Namespace, record_path: Path) -> dict[str, Any] | None:
    """The run's record: a new one, or the saved one to resume (``None``: refused, said on stderr)."""
    from kutnahora.envs.run_folder import occupied

    folder: Path = args.run
    if args.resume:
        if not record_path.exists():
            print(f"kutnahora-train: {folder} holds no pipeline.json to resume from", file=sys.stderr)
            return None
        record: dict[str, Any] = json.loads(record_path.read_text())
        if tuple(record["stages"]) != STAGES:
            print(
                f"kutnahora-train: {folder} was made by a pipeline of other stages "
                f"({', '.join(record['stages'])}); start a new run",
                file=sys.stderr,
            )
            return None
        return record
    if occupied(folder):
        return None
    for name in ("ppo_samples", "distill_iterations", "workers", "polish_minutes"):
        if getattr(args, name) < 1:
            print(f"kutnahora-train: --{name.replace('_', '-')} must be at least 1", file=sys.stderr)
            return None
    if args.hours <= 0:
        print("kutnahora-train: --hours must be more than 0", file=sys.stderr)
        return None
    if not 0 <= args.learner_games <= 1 or args.match_games < 0 or args.policy_games < 0:
        print(
            "kutnahora-train: --learner-games is a share from 0 to 1, and the match's games are 0 or more",
            file=sys.stderr,
        )
        return None
    return {
        "options": {key: getattr(args, key) for key in OPTIONS},
        "stages": {name: {"done": False, "seconds": 0.0, "commands": []} for name in STAGES},
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def command(args: argparse.Namespace, text: str, train: Callable[[Sequence[str]], int]) -> int:
    """``kutnahora-train pipeline``: run the stages not yet done, recording each one's time; ``train`` is
    ``kutnahora-train``'s own entry point, which runs the training stages."""
    from kutnahora.clients.files import write_json
    from kutnahora.envs import ladder

    folder: Path = args.run
    record_path = folder / "pipeline.json"
    record = _configure(args, record_path)
    if record is None:
        return 2
    folder.mkdir(parents=True, exist_ok=True)
    for sentence in recover_unrecorded(record, folder):
        print(f"kutnahora-train: {sentence}", file=sys.stderr)
    record.setdefault("commands", []).append(text)
    write_json(record_path, record)
    config = record["options"]
    arguments = stage_arguments(config, folder, args.progress)
    exports = {"ppo": folder / "start.npz", "distill": folder / "guide.npz", "polish": folder / "neural.npz"}
    for number, name in enumerate(STAGES, 1):
        stage = record["stages"][name]
        if stage["done"]:
            print(f"stage {number}/{len(STAGES)}, {name}: done ({stage['seconds'] / 60:.1f} min)")
            continue
        print(f"stage {number}/{len(STAGES)}, {name}", flush=True)
        started = time.monotonic()
        stage["running_since"] = time.time()  # on disk with the stage's command: recover_unrecorded
        try:
            if name in arguments:
                stage_folder = folder / name
                resume = (stage_folder / "checkpoint.pt").exists()
                if not resume and stage_folder.exists():
                    shutil.rmtree(stage_folder)  # stopped before its first checkpoint: start it again
                argv = [*arguments[name], *(["--resume"] if resume else [])]
                spent = sum(s["seconds"] for s in record["stages"].values())
                if name == "distill" and not config["smoke"]:
                    argv += ["--minutes", f"{distill_minutes(config, spent):.1f}"]
                if name == "polish" and not config["smoke"]:
                    argv += ["--minutes", f"{polish_minutes(config, spent, stage['seconds']):.1f}"]
                stage["commands"].append("kutnahora-train " + " ".join(argv))
                write_json(record_path, record)  # what runs, on disk while it runs
                code = train(argv)
                if code == 0:
                    export = ["export", str(stage_folder), "--to", str(exports[name])]
                    best = best_policy_iteration(stage_folder) if name == "polish" else None
                    if best is not None:
                        export += ["--iteration", str(best[0])]
                        stage["chosen_iteration"] = best[0]
                        print(
                            f"the policy of iteration {best[0]} won {best[1]:.0%} of its evaluation's "
                            "two- and four-player games against greedy, the most: it is the one exported"
                        )
                    stage["commands"].append("kutnahora-train " + " ".join(export))
                    code = train(export)
            else:
                code = 0
                for match in match_arguments(config, folder):
                    report = Path(match[-1])
                    argv = [*match, *(["--resume"] if report.exists() else [])]
                    stage["commands"].append(f"python -m {ladder.__name__} " + " ".join(argv))
                    write_json(record_path, record)
                    code = code or ladder.main(argv)
        finally:
            stage["seconds"] = round(stage["seconds"] + time.monotonic() - started, 1)
            del stage["running_since"]
            write_json(record_path, record)
        if code != 0:
            print(f"kutnahora-train: stage {name} stopped (exit {code}); --resume goes on", file=sys.stderr)
            return code
        stage["done"] = True
        write_json(record_path, record)
    total = sum(s["seconds"] for s in record["stages"].values())
    record["seconds"] = round(total, 1)
    write_json(record_path, record)
    print(
        f"done in {total / 3600:.2f} h: "
        + ", ".join(f"{n} {s['seconds'] / 60:.1f} min" for n, s in record["stages"].items())
    )
    for name, what in (("match", "match.json"), ("policy", "policy.json")):
        if (folder / what).exists():
            print(f"the {name}'s games and tables: {folder / what}")
    from kutnahora.learned import network

    chosen = record["stages"]["polish"].get("chosen_iteration")
    iteration = "" if chosen is None else f" --iteration {chosen}"
    print(
        "to play them as the shipped networks:\n"
        f"  kutnahora-train export {folder / 'polish'}{iteration} --to {network.WEIGHTS}\n"
        f"  kutnahora-train export {folder / 'distill'} --to {network.GUIDE}"
    )
    return 0
