"""``python -m laminate``: the command line."""

from ._cli.main import main

raise SystemExit(main())
