"""Hosting strangers' bots: submissions, the sandbox, control groups, leased users and the seat gateway.

What the tournament runner (``kutnahora-tournament --submissions``) and the arena's sandbox workers
(``kutnahora-arena-worker``) share to play a submitted bot's seat:

- :mod:`kutnahora.hosting.submission` and :mod:`kutnahora.hosting.submission_files`: a submission's
  manifest, read as a stranger's folder (no link out of it, sizes bounded);
- :mod:`kutnahora.hosting.builds`: copying a submission into a work folder and building it once, walled in;
- :mod:`kutnahora.hosting.sandbox`, :mod:`kutnahora.hosting.cgroups` and :mod:`kutnahora.hosting.leases`:
  the walls (bubblewrap, per-bot control groups, ``prlimit``, a user id leased for the bot's life);
- :mod:`kutnahora.hosting.gateway` and :mod:`kutnahora.hosting.gateway_limits`: the seat gateway, a bot's
  only way to the game server, for its own game and seat, within the bounds of its submission;
- :mod:`kutnahora.hosting.seat`: one seat played, all of the above together;
- :mod:`kutnahora.hosting.processes`: stopping a bot's process group and saying why it ended.

It imports neither the clients nor either service: both the tournament runner and the workers build on it.
"""
