"""Kutná Hora as an environment for reinforcement learning: OpenSpiel, PettingZoo and Gymnasium.

Needs the ``rl`` extra (``pip install -e '.[rl]'``). :mod:`~kutnahora.learned.encoding` turns a seat's
observation into a fixed-size vector and :mod:`~kutnahora.learned.actions` numbers every option of every
decision in one fixed action space; the adapters build on both.
"""

from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout

__all__ = ["ActionSpace", "ObservationLayout"]
