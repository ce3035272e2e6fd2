"""What a bot needs to play a trained network: the network's forward pass and its weights files
(:mod:`~kutnahora.learned.network`, ``weights/``), the fixed action space
(:mod:`~kutnahora.learned.actions`), the observation vector (:mod:`~kutnahora.learned.encoding`, and
:mod:`~kutnahora.learned.state_encoding` straight from a state) and a finished game's returns
(:mod:`~kutnahora.learned.outcome`).

The engine and NumPy only (the ``rl`` extra): the bots below the learning environments play networks with
it, and the environments (:mod:`kutnahora.envs`) build their spaces and training on it.
"""
