"""``python -m skrl_like``: the command line (:mod:`skrl_like.cli`), as the ``skrl_like`` console script."""

import sys

from skrl_like.cli import main

sys.exit(main())
