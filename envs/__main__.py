"""``python -m kutnahora.envs``: print the observation layout and the action id ranges."""

from kutnahora.learned.encoding import main

raise SystemExit(main())
