"""What the CLI and the app both do, once: plain functions over a workspace.

The front ends (``calibrate_app.cli`` and the Streamlit pages) parse their input, call one of
these and show what it returns; they import no store (an import-linter contract holds that).
One module per workflow, named for what the user does; importing this package loads none of
them, so ``--help`` stays light.
"""
