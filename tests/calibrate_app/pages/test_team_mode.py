"""Team mode under AppTest: nothing before sign-in, and each role sees only its pages.

The annotator of a label is the signed-in identity (``st.user``), never a typed name or
``?user=``.

The real sign-in flow against an OpenID Connect server is in
``tests/calibrate_app/browser/test_team_sign_in.py``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from markup import shown
from repo_paths import APP_SCRIPT
from streamlit.testing.v1 import AppTest

from judges.workspace import Workspace
from labels import LabelStore
from labels.importing import import_rows
from labels.stores.db import Database
from labels.stores.team_store import TeamStore

ISSUER = "http://127.0.0.1:9/idp"
AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32,
        "client_id": "calibrate", "client_secret": "s" * 32,
        "server_metadata_url": f"{ISSUER}/.well-known/openid-configuration"}
PAGES = ("data", "label", "judges", "calibration", "export")


@pytest.fixture
def team_db(app_env: Path, make_rows: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
            ) -> Path:
    """A dataset of 6 rows, an owner, an annotator and a viewer; the app in team mode."""
    monkeypatch.setenv("CALIBRATE_AUTH", "oidc")
    db = Database(app_env)
    try:
        import_rows(LabelStore(db), make_rows(tmp_path / "rows.jsonl", 6), "secretset")
        team = TeamStore(db, LabelStore(db))
        for email, role in (("owner@example.org", "owner"), ("ann@example.org", "annotator"),
                            ("view@example.org", "viewer")):
            team.set_role(email, role, actor="cli:test")  # type: ignore[arg-type]
    finally:
        db.close()
    return app_env


def signed_in_user(email: str, *, subject: str | None = None, issued_at: float | None = None
                   ) -> dict[str, Any]:
    """``st.user`` as Streamlit fills it from the provider's ID token."""
    return {"is_logged_in": True, "email": email, "email_verified": True, "iss": ISSUER,
            "sub": subject or f"sub-{email}",
            "iat": int(time.time()) if issued_at is None else int(issued_at)}


def run_as(email: str | None, page: str | None = None, *, subject: str | None = None,
           issued_at: float | None = None, session: dict[str, Any] | None = None,
           **params: str) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=30)
    at.secrets["auth"] = AUTH
    at.user = ({"is_logged_in": False} if email is None else
               signed_in_user(email, subject=subject, issued_at=issued_at))
    for name, value in params.items():
        at.query_params[name] = value
    for key, value in (session or {}).items():
        at.session_state[key] = value
    at.run()
    if page is not None:
        at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def shown_text(at: AppTest) -> str:
    parts: list[str] = []
    for group in (at.text, at.markdown, at.caption, at.info, at.warning, at.success, at.error,
                  at.header, at.subheader, at.title):
        parts.extend(str(e.value) for e in group)
    for group in (at.button, at.selectbox, at.expander):
        parts.extend(str(getattr(e, "label", "")) for e in group)
    parts.extend(str(o) for s in at.selectbox for o in s.options)
    return "\n".join(parts)


def offered_pages(at: AppTest) -> set[str]:
    """The url paths of the pages ``st.navigation`` registered in the last run (none: empty)."""
    return {Path(str(info["script_path"])).stem for info in at._registered_pages.values()
            if "url_pathname" in info}


def run_page_alone(email: str, page: str) -> AppTest:
    """``page``'s script run as the main script, as if reached without the navigation."""
    at = AppTest.from_file(str(APP_SCRIPT.parent / "app_pages" / f"{page}.py"),
                           default_timeout=30)
    at.secrets["auth"] = AUTH
    at.user = signed_in_user(email)
    at.run()
    assert not at.exception, at.exception
    return at


def test_nothing_but_the_sign_in_button_before_sign_in(team_db: Path) -> None:
    at = run_as(None)
    assert [b.label for b in at.button] == ["Sign in"]
    assert not offered_pages(at)
    assert "secretset" not in shown_text(at)
    for page in PAGES:  # a page script run by itself stops at the same screen
        alone = AppTest.from_file(str(APP_SCRIPT.parent / "app_pages" / f"{page}.py"),
                                  default_timeout=30)
        alone.secrets["auth"] = AUTH
        alone.user = {"is_logged_in": False}
        alone.run()
        assert [b.label for b in alone.button] == ["Sign in"], page
        assert "secretset" not in shown_text(alone) and "Question number" not in shown_text(
            alone)


def test_a_signed_in_address_without_a_role_is_asked_to_see_an_owner(team_db: Path) -> None:
    at = run_as("stranger@example.org")
    text = shown_text(at)
    assert "no role here yet" in text and "calibrate users add" in text
    assert "secretset" not in text and not offered_pages(at)


@pytest.mark.parametrize(("email", "pages"), [
    ("owner@example.org", {"data", "label", "judges", "calibration", "export"}),
    ("ann@example.org", {"label"}),
    ("view@example.org", {"calibration", "export"}),
])
def test_each_role_is_offered_its_pages_and_refused_the_others(team_db: Path, email: str,
                                                               pages: set[str]) -> None:
    at = run_as(email)
    assert offered_pages(at) == pages
    for page in PAGES:
        if page not in pages:  # not registered: Streamlit has no such page for this visitor
            with pytest.raises(ValueError, match="Could not find a navigation page"):
                at.switch_page(f"app_pages/{page}.py")
            # And the page's own script refuses the role however it comes to run.
            alone = run_page_alone(email, page)
            assert any("cannot open this page" in str(e.value) for e in alone.error), page
            assert not alone.header and "secretset" not in shown_text(alone)
        else:
            at.switch_page(f"app_pages/{page}.py").run()
            assert not at.exception, (page, at.exception)
            if page == "label":  # the Label page has no header: its first row is the sign
                assert "Question number" in shown_text(at)
            else:
                assert page.capitalize() in {str(h.value) for h in at.header}, page


def test_the_annotator_is_the_signed_in_address_not_the_url(team_db: Path) -> None:
    at = run_as("Ann@Example.org", "label", user="owner@example.org", dataset="secretset")
    text = shown_text(at)
    assert "Who is labelling?" not in text and "Not owner@example.org?" not in text
    assert "Sign out" in [b.label for b in at.button]
    assert not any("Queue settings" in str(e.label) for e in at.expander)  # owners only
    at.button(key="verdict_pass").click().run()
    assert not at.exception
    db = Database(team_db)
    try:
        labels = LabelStore(db).current_labels("secretset")
        assert labels["annotator"].tolist() == ["ann@example.org"]
        trail = TeamStore(db, LabelStore(db)).audit()
    finally:
        db.close()
    label = trail[-1]
    assert (label.actor, label.action, label.before) == ("ann@example.org", "label", None)
    assert label.after["verdict"] == "pass"
    first = next(e for e in trail if e.action == "sign-in")
    assert first.subject == "ann@example.org" and first.after["subject"] == (
        "sub-Ann@Example.org")


def test_another_account_with_a_bound_address_is_refused(team_db: Path) -> None:
    run_as("view@example.org", subject="first-account")
    at = run_as("view@example.org", "calibration", subject="another-account")
    text = shown_text(at)
    assert "first signed in from another account" in text
    assert "Calibration" not in {str(h.value) for h in at.header}
    db = Database(team_db)
    try:
        TeamStore(db, LabelStore(db)).release_identity("view@example.org", actor="cli:test")
    finally:
        db.close()
    again = run_as("view@example.org", "calibration", subject="another-account")
    assert "Calibration" in {str(h.value) for h in again.header}


def test_team_mode_without_provider_settings_says_what_is_missing(team_db: Path) -> None:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=30)
    at.user = {"is_logged_in": True, "email": "owner@example.org", "sub": "x"}
    at.run()
    assert "[auth] in .streamlit/secrets.toml" in shown(at.error[0].value)
    assert not offered_pages(at)


def test_owners_see_each_annotators_progress_and_the_agreement_matrix(
        demo_app_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALIBRATE_AUTH", "oidc")
    db = Database(demo_app_db)
    try:
        team = TeamStore(db, LabelStore(db))
        team.set_role("owner@example.org", "owner", actor="cli:test")
        team.set_role("view@example.org", "viewer", actor="cli:test")
    finally:
        db.close()
    owner = run_as("owner@example.org", "calibration", dataset="demo-labelled")
    section = next(e for e in owner.expander if str(e.label).startswith("Annotators (2)"))
    progress, matrix = (d.value for d in section.dataframe)
    # The demo's two annotators share 69 decided rows: the report's human-human kappa.
    assert list(matrix.index) == ["dana", "emeka"] == list(matrix.columns)
    assert matrix.loc["dana", "emeka"] == matrix.loc["emeka", "dana"]
    assert matrix.loc["dana", "emeka"].endswith("(n 69)")
    assert set(progress.index) == {"dana", "emeka"} and (progress["labels"] > 0).all()
    viewer = run_as("view@example.org", "calibration", dataset="demo-labelled")
    assert "Calibration" in {str(h.value) for h in viewer.header}
    assert not any("Annotators (" in str(e.label) for e in viewer.expander)


# -- blind by construction, impersonation, assignments ----------------------------------------

CANARY_NOTE, CANARY_VERDICT = "canary-note-4f1c of another annotator", "canary-verdict-9b2e"


def everything(at: AppTest) -> str:
    """Every element the run sent, as its protobuf text (tables' Arrow bytes included)."""
    out: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


@pytest.fixture
def canary_db(team_db: Path, tmp_path: Path) -> Path:
    """The team database plus a judge verdict and another annotator's note, both canaries."""
    from judges.verdicts import import_verdicts

    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text(f"id,verdict,reasoning\nq0,fail,{CANARY_VERDICT}\nq1,pass,fine\n",
                        encoding="utf-8")
    db = Database(team_db)
    try:
        store = LabelStore(db)
        import_verdicts(Workspace.of(store), verdicts, dataset="secretset", judge="canary-judge")
        TeamStore(db, LabelStore(db)).set_role("other@example.org", "annotator", actor="cli:test")
        store.add_label("secretset", "q0", "other@example.org", "pass", note=CANARY_NOTE)
    finally:
        db.close()
    return team_db


def test_an_annotator_reaches_no_verdict_and_no_other_annotators_note(canary_db: Path) -> None:
    owner = run_as("owner@example.org", "calibration", dataset="secretset")
    assert CANARY_NOTE in everything(owner) or "canary-judge" in everything(owner)  # seeded
    # Every way in: the navigation, each page's own script, and URL parameters naming the
    # canary's row, judge and annotator.
    runs = [run_as("ann@example.org", "label", dataset="secretset", user="other@example.org",
                   judge="canary-judge", item="q0")]
    runs += [run_page_alone("ann@example.org", page) for page in PAGES]
    for at in runs:
        seen = everything(at)
        assert CANARY_NOTE not in seen and CANARY_VERDICT not in seen
        assert "canary-judge" not in seen and "other@example.org" not in seen
    viewer = run_as("view@example.org", "calibration", dataset="secretset")
    assert CANARY_NOTE not in everything(viewer)  # notes are for owners


def test_my_labels_lists_only_the_signed_in_annotators_own_labels(canary_db: Path) -> None:
    # Both annotators labelled q0 and wrote a note; "My labels" reads only the signed-in
    # address's rows (the store's SQL filters by it), whatever the URL names.
    own_note = "ann-own-note-7d3a"
    db = Database(canary_db)
    try:
        store = LabelStore(db)
        store.add_label("secretset", "q0", "ann@example.org", "fail", note=own_note)
        store.add_label("secretset", "q1", "other@example.org", "fail", note=CANARY_NOTE)
    finally:
        db.close()
    at = run_as("ann@example.org", "label", dataset="secretset", user="other@example.org")
    at.button(key="nav_history").click().run()
    assert not at.exception, at.exception
    seen = everything(at)
    assert own_note in seen and "id q0" in seen  # the list is open and shows her label
    assert "1 labelled and 0 skipped by you" in seen
    assert CANARY_NOTE not in seen and "other@example.org" not in seen
    assert "id q1" not in seen  # the row only the other annotator labelled is not listed
    at.session_state["history_search"] = "canary"
    at.button(key="nav_history").click().run()
    seen = everything(at)
    assert "Nothing matches." in seen and CANARY_NOTE not in seen


def test_impersonation_attempts_are_refused(team_db: Path) -> None:
    # A forged session value: the visitor memo and the remembered name, as a browser could
    # send plain values; the label still goes to the signed-in address.
    forged = {"_calibrate_visitor_of_this_run": {"email": "owner@example.org", "role": "owner"},
              "_calibrate_remembered": {"user": "owner@example.org"}}
    at = run_as("ann@example.org", "label", session=forged, dataset="secretset")
    assert offered_pages(at) == {"label"}
    at.button(key="verdict_pass").click().run()
    db = Database(team_db)
    try:
        assert LabelStore(db).current_labels("secretset")["annotator"].tolist() == [
            "ann@example.org"]
        team = TeamStore(db, LabelStore(db))
        # An expired token: issued longer ago than a session lasts (12 hours by default).
        stale = run_as("ann@example.org", "label", issued_at=time.time() - 13 * 3600)
        assert "Your sign-in has expired" in shown_text(stale) and not offered_pages(stale)
        assert "Sign in again" in [b.label for b in stale.button]
        # A stale cookie after sign-out: a sign-in issued before the sign-out is over; a new
        # one is let in.
        before = time.time() - 60
        team.sign_out("ann@example.org", at=time.time())
        replay = run_as("ann@example.org", "label", issued_at=before)
        assert "ended when you signed out" in shown_text(replay) and not offered_pages(replay)
        assert offered_pages(run_as("ann@example.org", issued_at=time.time() + 1)) == {"label"}
        # A removed user: signed in, but no role any more.
        team.set_role("view@example.org", None, actor="cli:test")
        removed = run_as("view@example.org", "calibration", dataset="secretset")
        assert "no role here yet" in shown_text(removed) and not offered_pages(removed)
        assert "Calibration" not in {str(h.value) for h in removed.header}
    finally:
        db.close()


def test_assigned_rows_come_first_and_the_progress_counts_them(team_db: Path) -> None:
    from judges.workflows.queue import assign_batch

    db = Database(team_db)
    try:
        store = LabelStore(db)
        TeamStore(db, LabelStore(db)).set_role("bea@example.org", "annotator", actor="cli:test")
        dealt = assign_batch(Workspace.of(store), "secretset", "faithfulness",
                             ["ann@example.org", "bea@example.org"], batch=2, overlap=1,
                             actor="cli:test")
    finally:
        db.close()
    mine, hers = dealt.rows["ann@example.org"], dealt.rows["bea@example.org"]
    assert len(mine) == len(hers) == 2 and not set(mine) & set(hers)
    at = run_as("ann@example.org", "label", dataset="secretset")
    assert "0 / 2 assigned rows labelled, 0 skipped" in everything(at)
    for done in (1, 2, 3):
        at.button(key="verdict_pass").click().run()
        assert not at.exception
        if done == 1:  # the denominator is the assignment, however many rows others take
            assert "1 / 2 assigned rows labelled" in everything(at)
    db = Database(team_db)
    try:
        labelled = LabelStore(db).labelled_in_order("secretset", "ann@example.org",
                                                   "faithfulness")
    finally:
        db.close()
    assert labelled[:2] == mine  # the assignment first, in the order dealt
    assert labelled[2] not in hers  # then the shared queue, which leaves Bea's rows to her
    assert "assigned rows" not in everything(at)  # done: the queue's own progress line again
