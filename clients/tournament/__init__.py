"""The tournament runner: a seeded, seat-rotated schedule of bot games, played concurrently on a server.

- :mod:`kutnahora.clients.tournament.schedule` decides who sits where in every game and every game's seed;
- :mod:`kutnahora.clients.tournament.runner` plays the games (built-in bots in this process, external bots as
  commands), records crashes and timeouts, saves replays, and can start a local server;
- :mod:`kutnahora.clients.tournament.stats` computes the standings: win rates with Wilson intervals, mean
  scores and openskill ratings;
- :mod:`kutnahora.clients.tournament.results` reads and writes the results file that ``--resume`` continues;
- :mod:`kutnahora.clients.tournament.cli` is ``kutnahora-tournament``.
"""
