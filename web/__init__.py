"""The game in a browser: ``kutnahora-web`` serves a lobby, live and replayed games, a seat to play and
tournament standings, as a gRPC client of a game server through the public protocol (``kutnahora.v1`` and
:mod:`kutnahora.clients.sdk`), exactly as a bot would.

Modules: :mod:`.app` builds the Starlette application and its routes, :mod:`.wire` turns wire messages
into the JSON the pages read, :mod:`.seats` keeps a browser's seat in its cookie, :mod:`.bots` runs the
reference bots a page asks for, :mod:`.standings` reads a tournament's results file, and :mod:`.cli` is the
command. The pages (``templates/``) and their scripts (``static/``) ship in the wheel: nothing is fetched
from elsewhere at run time.
"""
