"""``python -m judges.cli``: the same as the ``calibrate`` console script."""

from judges.cli import main

main()
