"""Who is using the app, and what they may see: local mode, or team mode with sign-in and roles.

**Local mode** (the default): one person's app on their machine, optionally behind the shared
access code (``CALIBRATE_ACCESS_CODE``). Annotator names are typed, so they are claims.

**Team mode** (``CALIBRATE_AUTH=oidc``): people sign in with the organisation's OpenID Connect
provider through Streamlit's own ``st.login`` (provider settings under ``[auth]`` in
``.streamlit/secrets.toml``). Nothing is shown before sign-in. The signed-in address must have a
role (``calibrate users add``); its first sign-in binds the provider's account (issuer and
subject) to it, and the annotator of every label is that address. Each role is offered only
its pages (:data:`judges.workflows.team.ROLE_PAGES`), and every page checks the role again
when it runs (:func:`require_page`), so a URL, a query parameter or a page switch reaches
nothing else.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

import streamlit as st

from calibrate_app import resources, state, widgets
from judges.workflows import team as roles
from judges.workflows.team import ROLE_PAGES, Role
from labels.distribution import DISTRIBUTION
from labels.errors import CalibrateError

Page = Literal["data", "label", "judges", "calibration", "export"]


@dataclass(frozen=True)
class Visitor:
    """The person this run serves.

    Attributes:
        team: Whether the app is in team mode.
        email: The signed-in address (team mode), else None.
        role: Their role; ``owner`` in local mode (one person's app).
    """

    team: bool
    email: str | None
    role: Role

    def may_open(self, page: Page) -> bool:
        """Whether the visitor's role may open ``page``."""
        return page in ROLE_PAGES[self.role]


LOCAL = Visitor(team=False, email=None, role="owner")


def team_mode() -> bool:
    """Whether the app runs in team mode (``CALIBRATE_AUTH=oidc``)."""
    return resources.get_settings().auth == "oidc"


def check_team_settings() -> None:
    """In team mode, stop with a clear message unless sign-in is configured and installed."""
    if not team_mode():
        return
    try:
        configured = "auth" in st.secrets
    except FileNotFoundError:  # Streamlit's error when there is no secrets file at all
        configured = False
    problem = None
    if not configured:
        problem = ("CALIBRATE_AUTH=oidc needs the identity provider's settings under [auth] in "
                   ".streamlit/secrets.toml (redirect_uri, cookie_secret, client_id, "
                   "client_secret, server_metadata_url): see docs/team.md.")
    else:
        import importlib.util

        if importlib.util.find_spec("authlib") is None:
            problem = f"CALIBRATE_AUTH=oidc needs Authlib: pip install '{DISTRIBUTION}[team]'."
    if problem is not None:
        widgets.message("error", problem)
        st.stop()


def signed_in() -> None:
    """In team mode, stop the run with the sign-in screen unless someone is signed in."""
    if team_mode() and not st.user.get("is_logged_in"):
        _sign_in_screen()


def visitor() -> Visitor:
    """The visitor of this run; in team mode stops the run with the sign-in or "no role" screen.

    Reads the identity from ``st.user`` (set by Streamlit from the provider's ID token, never
    from anything the browser sends) and the role from the database once per run, so a role
    taken away applies at the visitor's next click while the entry point, the page guard,
    the owner-only buttons and the links of one run share one look-up.
    """
    keeps, known = state.run_visitor()
    if isinstance(known, Visitor):
        return known
    who = _identify()
    if keeps:
        state.keep_run_visitor(who)
    return who


def _identify() -> Visitor:
    if not team_mode():
        return LOCAL
    signed_in()
    user = st.user
    email, issuer, subject = user.get("email"), user.get("iss"), user.get("sub")
    if not isinstance(email, str) or not isinstance(subject, str) or user.get(
            "email_verified") is False:
        _stop_screen("Your identity provider did not give a verified e-mail address and an "
                     "account id, which team mode needs. Ask an owner to check the provider's "
                     "scopes (openid email).")
    _check_fresh(email, user.get("iat"))
    try:
        role = roles.sign_in(resources.get_workspace(), email, issuer=str(issuer or ""),
                             subject=subject)
    except CalibrateError as error:
        _stop_screen(str(error))
    if role is None:
        _stop_screen(f"You are signed in as {email}, but you have no role here yet. Ask an "
                     "owner to add you: `calibrate users add YOUR@ADDRESS --role annotator` "
                     "(or viewer).")
    return Visitor(team=True, email=email.strip().lower(), role=role)


def _check_fresh(email: str, issued_at: object) -> None:
    """Stop unless the sign-in is recent and its address has not signed out since.

    Streamlit's sign-in cookie is signed, not stored on the server, and lasts 30 days: a copy
    kept from before a sign-out would still be accepted, and so would a session long past the
    provider's token lifetime. The token's issue time (``iat``, which every OpenID Connect ID
    token carries) bounds both: a sign-in older than ``CALIBRATE_SESSION_HOURS`` or older than
    the address's last sign-out is over.
    """
    if isinstance(issued_at, bool) or not isinstance(issued_at, (int, float)):
        _stop_screen("Your identity provider's token has no issue time (iat), which team mode "
                     "needs to end sessions. Ask an owner to check the provider.", again=True)
    hours = resources.get_settings().session_hours
    if time.time() - float(issued_at) > hours * 3600:
        _stop_screen(f"Your sign-in has expired (sessions last {hours:g} hours). Sign in "
                     "again to continue.", again=True)
    if roles.signed_out_since(resources.get_workspace(), email, float(issued_at)):
        _stop_screen("This sign-in ended when you signed out. Sign in again to continue.",
                     again=True)


def require_page(page: Page) -> Visitor:
    """The visitor, if their role may open ``page``; otherwise the run stops with a message.

    Every page calls this first: :func:`pages_for` already leaves other pages out of the
    navigation, and this keeps a page from running for a role it is not meant for however it
    was reached.
    """
    who = visitor()
    if not who.may_open(page):
        widgets.message("error", f"Your role ({who.role}) cannot open this page.",
                        icon=":material/block:")
        st.stop()
    return who


def pages_for(who: Visitor) -> tuple[str, ...]:
    """The pages offered to ``who``, in data-flow order."""
    return ROLE_PAGES[who.role]


def is_owner() -> bool:
    """Whether this run's visitor may change shared settings (queue orders, escalations)."""
    return visitor().role == "owner"


def page_link(page: Page, label: str, icon: str, **options: Any) -> None:
    """``st.page_link`` to ``page``, drawn only when the visitor's role may open it.

    A link to a page outside the visitor's navigation would raise (Streamlit knows no such
    page for them), and offering it would be wrong anyway.
    """
    if visitor().may_open(page):
        st.page_link(f"app_pages/{page}.py", label=label, icon=icon, **options)


def record_export(what: str) -> None:
    """Note in the audit trail that the visitor downloaded ``what`` (team mode only)."""
    who = visitor()
    if who.team and who.email is not None:
        roles.record(resources.get_workspace(), who.email, "export", what)


def mode_caption(who: Visitor) -> str:
    """One line saying which mode the app is in, and what that means for names."""
    if who.team:
        return f"Team mode: signed in as {who.email} ({who.role})."
    return ("Local mode: annotator names are typed, so they are claims, not identities "
            "(team mode signs people in: docs/team.md).")


def sign_out_button(help: str | None = None) -> None:
    """The sign-out button (team mode), with ``help`` as its tooltip.

    The sign-out is recorded first, so every session of the address started before it ends
    (:func:`_check_fresh`), not only the cookie of this browser.
    """
    if st.button("Sign out", key="sign_out", type="tertiary", icon=":material/logout:",
                 help=None if help is None else widgets.escape_markdown(help)):
        email = st.user.get("email")
        if isinstance(email, str):
            with contextlib.suppress(CalibrateError):  # not an address: nothing to end
                roles.sign_out(resources.get_workspace(), email, at=time.time())
        st.logout()


def _sign_in_screen() -> NoReturn:
    st.title("calibrate")
    st.write("Sign in with your organisation's account to continue.")
    if st.button("Sign in", type="primary", icon=":material/login:", key="sign_in"):
        st.login()
    st.stop()
    raise AssertionError("unreachable")  # st.stop raises; for the type checker


def _stop_screen(text: str, *, again: bool = False) -> NoReturn:
    st.title("calibrate")
    widgets.literal(text)
    if again and st.button("Sign in again", type="primary", icon=":material/login:",
                           key="sign_in_again"):
        st.login()
    sign_out_button()
    st.stop()
    raise AssertionError("unreachable")


__all__ = ["LOCAL", "Page", "Visitor", "check_team_settings", "is_owner", "mode_caption",
           "page_link", "pages_for", "record_export", "require_page", "sign_out_button",
           "signed_in", "team_mode", "visitor"]
