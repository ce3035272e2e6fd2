"""Kutná Hora as an environment for reinforcement learning: OpenSpiel, PettingZoo and Gymnasium.

Needs the ``rl`` extra (``pip install -e '.[rl]'``). :mod:`~kutnahora.envs.encoding` turns a seat's
observation into a fixed-size vector and :mod:`~kutnahora.envs.actions` numbers every option of every
decision in one fixed action space; the adapters build on both.
"""

from kutnahora.envs.actions import ActionSpace
from kutnahora.envs.encoding import ObservationLayout

__all__ = ["ActionSpace", "ObservationLayout"]
