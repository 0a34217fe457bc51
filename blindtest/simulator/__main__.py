"""``python -m blindtest.simulator``."""

from blindtest.simulator.command import main

raise SystemExit(main())
