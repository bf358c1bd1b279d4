"""``python -m calibrate_app.cli``: the same as the ``calibrate`` console script."""

from calibrate_app.cli import main

main()
