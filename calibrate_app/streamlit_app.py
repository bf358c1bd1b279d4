"""Entry point of the app: settings, access code, the database, and the pages in data-flow order.

Run it with ``calibrate app`` (which sets ``CALIBRATE_DB_PATH``) or
``streamlit run calibrate_app/streamlit_app.py``.
"""

from __future__ import annotations

import hmac
from pathlib import Path

import streamlit as st

from calibrate_app import access, resources, state, widgets
from labels.errors import CalibrateError, DatabaseAccessError, DatabaseLockedError

PAGES = Path(__file__).resolve().parent / "app_pages"
# Served by the app itself: a Material icon name would make the browser fetch it from a CDN.
FAVICON = Path(__file__).resolve().parent / "static" / "favicon.svg"
# In data-flow order; each role is offered only its own (labels.stores.team_store.ROLE_PAGES).
PAGE_LIST = (
    ("data", "Data", ":material/upload_file:"),
    ("label", "Label", ":material/task_alt:"),
    ("judges", "Judges", ":material/gavel:"),
    ("calibration", "Calibration", ":material/tune:"),
    ("export", "Export", ":material/download:"),
)


def _access_gate(code: str) -> None:
    """Stop the run until this tab has entered the shared access code."""
    if state.access_granted():
        return
    st.title("calibrate")
    with st.form("access"):
        entered = st.text_input("Access code", type="password")
        submitted = st.form_submit_button("Enter")
    if submitted:
        if hmac.compare_digest(entered.encode(), code.encode()):
            state.grant_access()
            st.rerun()
        st.error("That access code is not right.")
    st.stop()


def main() -> None:
    """Build the app for one run of the script."""
    st.set_page_config(page_title="calibrate", page_icon=str(FAVICON), layout="wide")
    state.start_visitor_run()  # the visitor is looked up once per run (access.visitor)
    state.keep_alive()  # unsaved edits and choices survive page switches (state.keep)
    widgets.page_style()
    try:
        settings = resources.get_settings()
        resources.check_served_files()
    except CalibrateError as error:  # a settings file someone else could have written
        widgets.message("error", str(error))
        st.stop()
    if settings.auth == "oidc":  # team mode: the identity provider, then a role
        access.check_team_settings()
        access.signed_in()
    elif settings.access_code is not None and settings.access_code.get_secret_value():
        _access_gate(settings.access_code.get_secret_value())
    try:
        resources.get_store(settings)
    except (DatabaseLockedError, DatabaseAccessError) as error:  # held, or not yours
        widgets.message("error", str(error))
        if st.button("Retry", icon=":material/refresh:"):
            st.rerun()
        st.stop()
    who = access.visitor()  # team mode: stops here without a role
    offered = access.pages_for(who)
    pages = [
        st.Page(PAGES / f"{name}.py", title=title, icon=icon, url_path=name,
                default=name == offered[0])
        for name, title, icon in PAGE_LIST if name in offered
    ]
    st.navigation(pages, position="top").run()


main()
