"""The arena's sandbox worker (``kutnahora-arena-worker``): builds hosted bots and plays their games.

A worker leases work from the arena's ``HostingService`` (:mod:`kutnahora.worker.hosting_client`): a
version to build, or a bot to host. It keeps each lease alive (:mod:`kutnahora.worker.leases`), fetches
each archive once by its digest and builds each digest once, walled in (:mod:`kutnahora.worker.builds`),
and plays a hosted bot's games one at a time through the ordinary matchmaking
(:mod:`kutnahora.worker.hosting`), each seat behind a seat gateway in the sandbox of
:mod:`kutnahora.hosting`. :mod:`kutnahora.worker.worker` hands out the slots and stops everything cleanly;
:mod:`kutnahora.worker.main` is the command line.

Nothing imports it: it builds on :mod:`kutnahora.hosting` and the SDK's arena client.
"""
