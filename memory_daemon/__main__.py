"""`python -m memory_daemon` is the `cortexd` command."""

from memory_daemon.cli import main

raise SystemExit(main())
