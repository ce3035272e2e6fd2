"""``python -m kutnahora.envs``: print the observation layout and the action id ranges."""

from kutnahora.envs.encoding import main

raise SystemExit(main())
