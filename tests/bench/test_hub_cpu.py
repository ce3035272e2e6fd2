"""``python -m kutnahora.bench.hub_cpu`` times decisions through the hub and splits them into their parts."""

from __future__ import annotations

import re
import subprocess
import sys

from kutnahora import engine
from kutnahora.bench import hub_cpu
from kutnahora.engine import view as engine_view
from kutnahora.wire import seat_observation


def test_a_decisions_cpu_is_split_into_observation_and_submit() -> None:
    timed = (
        engine_view.Observer.observe,
        seat_observation.option_costs,
        seat_observation.unavailable_actions,
        engine.apply,
    )
    result = hub_cpu.measure(games=4, decisions=200)
    assert result.decisions == 200
    assert result.observation_us > 0 and result.submit_us > 0
    if hub_cpu.observation_split():
        # the acting seat's observation always prices its options (a free decision's costs come quickly)
        assert result.observer_us > 0 and result.pricing_us > 0
        assert result.observer_us + result.pricing_us <= result.observation_us
    else:  # compiled: they are called past any wrapper, and the observation is timed whole
        assert result.observer_us == result.pricing_us == 0
    assert result.store_us > 0 and result.apply_us > 0
    assert result.store_us + result.apply_us <= result.submit_us
    # the timed functions are the originals again
    now = (
        engine_view.Observer.observe,
        seat_observation.option_costs,
        seat_observation.unavailable_actions,
        engine.apply,
    )
    assert now == timed
    # the parts are timed inside the whole, which also holds the loop and the games that replace ended ones
    assert result.observation_us + result.submit_us <= result.total_us * 1.01


def test_the_command_prints_each_repeat_and_the_medians() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "kutnahora.bench.hub_cpu",
            "--games", "3", "--decisions", "100", "--repeats", "2",
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(re.findall(r"^repeat \d: \d+ µs of CPU per decision", done.stdout, re.M)) == 2
    assert len(re.findall(r"the store's insert \d+, the engine's apply \d+\)$", done.stdout, re.M)) == 2
    assert re.search(r"^median of 2: \d+ µs per decision \(3 games in turn", done.stdout, re.M)
    refused = subprocess.run(
        [sys.executable, "-m", "kutnahora.bench.hub_cpu", "--repeats", "0"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode != 0 and "must be positive" in refused.stderr
