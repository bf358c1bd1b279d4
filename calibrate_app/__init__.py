"""The Streamlit app: import rows, label them, run judges, calibrate, export.

Start it with ``calibrate app`` (see :mod:`calibrate_app.cli._app`); the entry point is
``calibrate_app/streamlit_app.py``.
"""
