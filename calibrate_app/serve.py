"""What ``calibrate app`` runs: Streamlit's own command line, with ``/_stcore/metrics`` off.

Streamlit serves ``/_stcore/metrics`` (cache names and sizes, session counts) to anyone who can
reach the port, with no option to turn it off; the access code guards only the pages. This
module removes that route before Streamlit builds its server, then hands over to
``streamlit run`` with the arguments it was given (``python -m calibrate_app.serve run …``).
"""

from __future__ import annotations

import sys
from typing import Any


def _no_routes(*args: Any, **kwargs: Any) -> list[Any]:
    return []


def disable_metrics() -> bool:
    """Take ``/_stcore/metrics`` out of the routes Streamlit's server will serve.

    Returns whether it could (the server module is Streamlit's Starlette one, 1.5x and later);
    when not, a warning says so where the operator reads it.
    """
    import importlib

    try:
        server = importlib.import_module("streamlit.web.server.starlette.starlette_app")
    except ImportError:
        server = None
    if server is None or not hasattr(server, "create_metrics_routes"):
        print("calibrate: this Streamlit version serves /_stcore/metrics (cache names and hit "
              "counts) to anyone who reaches the port; keep the app on 127.0.0.1",
              file=sys.stderr, flush=True)
        return False
    setattr(server, "create_metrics_routes", _no_routes)  # noqa: B010 - a module found at run time
    return True


def main() -> None:
    """``streamlit`` with the rest of the command line, metrics off."""
    disable_metrics()
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
