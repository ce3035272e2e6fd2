"""Train Stable-Baselines3's MaskablePPO on the Gymnasium environment, against random, then greedy.

The agent plays seat 0 of a two-player game. Observations are the normalised vector (``normalized=True``)
and the legal-action mask reaches the policy through sb3-contrib's ``ActionMasker``, as in PettingZoo's
tutorials for its classic games. Training runs in two phases, the first against the ``random`` bot and
the second against ``greedy`` (the opponents are changed on the same environment with
``set_opponents``). Untrained, the policy plays 100 games (``--eval-games``) against random; trained, 100
against each bot; each evaluation is made twice, with the policy's most likely action (deterministic) and
with actions drawn from it (sampled); the win rates are printed with Wilson 95 % intervals and written to
a JSON file, the learning curve (the return of each training game, averaged over the last 100, against
the steps) is drawn to a PNG, and the model is saved (``MaskablePPO.load`` reads it back). The outputs go
to a new folder, ``kutnahora-runs/maskable-ppo-<time>`` (``--out``), never over a tracked file.

Needs the ``train`` extra (``pip install -e '.[train]'``)::

    python examples/train_maskable_ppo.py                 # a few minutes on one CPU core
    python examples/train_maskable_ppo.py --smoke         # the whole pipeline in a few seconds, not learning
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt

from kutnahora.clients.tournament.stats import wilson

ROOT = Path(__file__).resolve().parent.parent


class VectorOnly(gymnasium.ObservationWrapper[npt.NDArray[np.float32], np.int64, dict[str, Any]]):
    """The observation vector alone (the mask goes to the policy through ``ActionMasker``)."""

    def __init__(self, env: gymnasium.Env[dict[str, Any], np.int64]) -> None:
        super().__init__(env)
        self.observation_space = env.observation_space["observation"]  # type: ignore[index]

    def observation(self, observation: dict[str, Any]) -> npt.NDArray[np.float32]:
        vector: npt.NDArray[np.float32] = observation["observation"]
        return vector


def evaluate(
    model: Any, players: int, opponent: str, games: int, seed: int, deterministic: bool = True
) -> dict[str, Any]:
    """The policy (its most likely action, or one sampled) in ``games`` games against ``opponent``: wins,
    ties and the interval."""
    from kutnahora.envs.gymnasium_env import KutnaHoraEnv

    env = KutnaHoraEnv(players=players, opponents=opponent, normalized=True)
    wins = ties = 0
    for game in range(games):
        observation, _ = env.reset(seed=seed + game)
        reward, done = 0.0, False
        while not done:
            action, _ = model.predict(
                observation["observation"],
                action_masks=observation["action_mask"],
                deterministic=deterministic,
            )
            observation, reward, done, _, _ = env.step(int(action))
        wins += reward == 1.0
        ties += reward == 0.0
    low, high = wilson(wins, games)
    return {
        "opponent": opponent,
        "policy": "deterministic" if deterministic else "sampled",
        "games": games,
        "wins": wins,
        "ties": ties,
        "win_rate": wins / games,
        "wilson95": [low, high],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="MaskablePPO on the Kutná Hora Gymnasium environment: train against random, then "
        "greedy; evaluate win rates with Wilson intervals; draw the learning curve.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="seats per game")
    parser.add_argument("--timesteps", type=int, default=16_384, help="agent steps against random")
    parser.add_argument("--greedy-timesteps", type=int, default=4_096, help="agent steps against greedy")
    parser.add_argument("--eval-games", type=int, default=100, help="games per evaluation")
    parser.add_argument("--seed", type=int, default=1, help="seed of training and evaluation")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="check the pipeline end to end in seconds: 1536 + 512 steps, 4 evaluation games",
    )
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("kutnahora-runs") / f"maskable-ppo-{stamp}",
        help="folder of the outputs (a new one by default): curve.png, results.json and model.zip",
    )
    parser.add_argument("--plot", type=Path, help="the PNG to draw (default: OUT/curve.png)")
    parser.add_argument("--json", type=Path, help="the figures (default: OUT/results.json)")
    parser.add_argument("--model", type=Path, help="the trained model (default: OUT/model.zip)")
    args = parser.parse_args(argv)
    args.plot = args.plot or args.out / "curve.png"
    args.json = args.json or args.out / "results.json"
    args.model = args.model or args.out / "model.zip"
    if args.smoke:
        args.timesteps, args.greedy_timesteps, args.eval_games = 1536, 512, 4
    if min(args.timesteps, args.greedy_timesteps) < 1 or args.eval_games < 1:
        parser.error("--timesteps, --greedy-timesteps and --eval-games must be at least 1")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor

    from kutnahora.envs.gymnasium_env import KutnaHoraEnv

    torch.set_num_threads(args.threads)
    base = KutnaHoraEnv(players=args.players, opponents="random", normalized=True)
    env = Monitor(ActionMasker(VectorOnly(base), lambda e: base.action_masks()))
    small = args.smoke
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=256 if small else 1024,
        batch_size=64 if small else 128,
        n_epochs=2 if small else 5,
        learning_rate=3e-4,
        gamma=0.995,
        ent_coef=0.01,
        seed=args.seed,
        policy_kwargs={"net_arch": [128, 128]},
        verbose=0,
    )
    started = time.perf_counter()

    def report(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {text}", file=sys.stderr, flush=True)

    evaluations: list[dict[str, Any]] = []

    def evaluate_all(stage: str, opponents: Sequence[str]) -> None:
        for opponent in opponents:
            for deterministic in (True, False):
                result = {
                    "stage": stage,
                    **evaluate(model, args.players, opponent, args.eval_games, 10_000, deterministic),
                }
                low, high = result["wilson95"]
                report(
                    f"{stage}: {result['policy']} against {opponent}, {result['wins']}/{result['games']} "
                    f"won ({result['win_rate']:.0%}, 95% {low:.0%}–{high:.0%})"
                )
                evaluations.append(result)

    class Progress(BaseCallback):
        """A line after every rollout: steps so far and the average return of recent training games."""

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            recent = env.get_episode_rewards()[-100:]
            average = sum(recent) / len(recent) if recent else float("nan")
            report(
                f"{self.num_timesteps} steps; average return of the last {len(recent)} games {average:+.2f}"
            )

    evaluate_all("untrained", ["random"])
    report(f"training {args.timesteps} steps against random")
    model.learn(total_timesteps=args.timesteps, callback=Progress())
    switch = model.num_timesteps
    base.set_opponents("greedy")
    report(f"training {args.greedy_timesteps} steps against greedy")
    model.learn(total_timesteps=args.greedy_timesteps, reset_num_timesteps=False, callback=Progress())
    evaluate_all("trained", ["random", "greedy"])
    seconds = time.perf_counter() - started

    returns = np.array(env.get_episode_rewards(), dtype=float)
    ends = np.cumsum(env.get_episode_lengths())
    window = min(100, max(1, len(returns)))
    average = np.convolve(returns, np.ones(window) / window, mode="valid") if len(returns) else returns
    figure, axis = plt.subplots(figsize=(8, 4.5))
    axis.plot(ends, returns, ".", alpha=0.15, color="grey", label="return of a training game")
    axis.plot(ends[window - 1 :], average, color="C0", label=f"average of the last {window}")
    axis.axvline(switch, color="C3", linestyle="--", label="opponent: random → greedy")
    axis.set_xlabel("agent steps")
    axis.set_ylabel("return (+1 win, −1 loss)")
    axis.set_ylim(-1.05, 1.05)
    axis.set_title(f"MaskablePPO, {args.players} players, seat 0")
    axis.legend(loc="lower right")
    figure.tight_layout()
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.plot, dpi=100)
    results = {
        "players": args.players,
        "timesteps": {"random": args.timesteps, "greedy": args.greedy_timesteps},
        "training_games": len(returns),
        "seconds": round(seconds, 1),
        "torch": torch.__version__,
        "evaluations": evaluations,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    args.model.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.model)
    report(f"done in {seconds:.0f} s; curve in {args.plot}, figures in {args.json}, model in {args.model}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
