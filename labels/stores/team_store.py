"""Team mode's store: who may do what (roles), who signed in as whom, and the audit trail.

In team mode (``CALIBRATE_AUTH=oidc``) the app signs people in with the organisation's OpenID
Connect provider, and an annotator is the signed-in identity, never a typed name. This module
keeps, in the same DuckDB file as the labels (the ``team`` migration set):

* ``team_roles``: every role change, append-only. A person's role is the newest row for their
  e-mail address (``role`` NULL: removed). ``owner`` may do everything, ``annotator`` may only
  label (blind: the Label page, their own labels), ``viewer`` may read the Calibration and Export
  pages.
* ``team_identities``: the provider's account (issuer and subject) an e-mail address first signed
  in with, append-only (the newest row per address; subject NULL: released by an owner). A later
  sign-in with the same address from another account is refused: the address alone is a claim
  some providers let users change, the subject is not.
* ``team_assignments``: the rows an owner dealt to each annotator (:mod:`labels.assignments`),
  append-only (a withdrawal is a newer row with ``withdrawn`` set).
* ``team_sign_outs``: when each address signed out; a sign-in issued before it is over.
* ``audit``: every role change, sign-in binding and export, with who did it, when, and the value
  before and after. Labels are append-only in their own table; :meth:`TeamStore.audit` lists
  them with their previous value beside these entries.

Nothing here is ever updated in place or deleted.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, get_args

from labels.audit import AuditEntry
from labels.errors import CalibrateError, InvalidNameError, NotFoundError
from labels.stores.db import Database
from labels.stores.migrations import Migration
from labels.validation import check_name, shown

if TYPE_CHECKING:
    from labels.stores.label_store import LabelStore

Role = Literal["owner", "annotator", "viewer"]
ROLES: tuple[Role, ...] = get_args(Role)
"""Every role, most powerful first."""

ROLE_PAGES: dict[Role, tuple[str, ...]] = {
    "owner": ("data", "label", "judges", "calibration", "export"),
    "annotator": ("label",),
    "viewer": ("calibration", "export"),
}
"""The app pages each role may open (every other page is not even offered)."""

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

M001_TEAM = """
CREATE SEQUENCE team_role_ids START 1;
CREATE TABLE team_roles (
    event_id BIGINT PRIMARY KEY DEFAULT nextval('team_role_ids'),
    email VARCHAR NOT NULL,
    role VARCHAR CHECK (role IN ('owner', 'annotator', 'viewer')),
    actor VARCHAR NOT NULL,
    changed_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
CREATE SEQUENCE team_identity_ids START 1;
CREATE TABLE team_identities (
    binding_id BIGINT PRIMARY KEY DEFAULT nextval('team_identity_ids'),
    email VARCHAR NOT NULL,
    issuer VARCHAR,
    subject VARCHAR,
    bound_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
CREATE SEQUENCE audit_ids START 1;
CREATE TABLE audit (
    audit_id BIGINT PRIMARY KEY DEFAULT nextval('audit_ids'),
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    actor VARCHAR NOT NULL,
    action VARCHAR NOT NULL,
    subject VARCHAR NOT NULL,
    before_value JSON,
    after_value JSON
)
"""

# Assignments (an owner's batches of rows per annotator) and sign-outs, both append-only: a
# withdrawn assignment is a newer row with ``withdrawn`` set, and a sign-out ends every session
# the address started before it (a copy of the sign-in cookie kept from before is refused).
M002_ASSIGNMENTS = """
CREATE SEQUENCE team_assignment_ids START 1;
CREATE TABLE team_assignments (
    assignment_id BIGINT PRIMARY KEY DEFAULT nextval('team_assignment_ids'),
    dataset VARCHAR NOT NULL,
    criterion VARCHAR NOT NULL,
    item_id VARCHAR NOT NULL,
    annotator VARCHAR NOT NULL,
    batch_id BIGINT NOT NULL,
    withdrawn BOOLEAN NOT NULL DEFAULT false,
    actor VARCHAR NOT NULL,
    assigned_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
CREATE SEQUENCE team_sign_out_ids START 1;
CREATE TABLE team_sign_outs (
    sign_out_id BIGINT PRIMARY KEY DEFAULT nextval('team_sign_out_ids'),
    email VARCHAR NOT NULL,
    signed_out_at DOUBLE NOT NULL
)
"""

TEAM_MIGRATIONS = [Migration("m001_team", M001_TEAM),
                   Migration("m002_assignments", M002_ASSIGNMENTS)]

# Both tables are append-only: what holds now is the newest row per address.
_CURRENT_ROLES = """
    SELECT email, role, actor, changed_at FROM team_roles
    QUALIFY row_number() OVER (PARTITION BY email ORDER BY event_id DESC) = 1"""
_CURRENT_BINDINGS = """
    SELECT email, issuer, subject FROM team_identities
    QUALIFY row_number() OVER (PARTITION BY email ORDER BY binding_id DESC) = 1"""
_ROLE_OF = "SELECT role FROM team_roles WHERE email = ? ORDER BY event_id DESC LIMIT 1"
_CURRENT_ASSIGNMENTS = """
    SELECT annotator, item_id, assignment_id FROM team_assignments
    WHERE dataset = ? AND criterion = ?
    QUALIFY row_number() OVER (PARTITION BY item_id, annotator ORDER BY assignment_id DESC) = 1
        AND NOT withdrawn"""


class TeamError(CalibrateError):
    """A role change or sign-in that cannot be done (bad address, last owner, other account)."""


@dataclass(frozen=True)
class Member:
    """A person with a role.

    Attributes:
        email: Their e-mail address (lower case), the annotator name of their labels.
        role: ``owner``, ``annotator`` or ``viewer``.
        added_by: Who gave them this role (``cli:<local user>`` or an owner's address).
        since: When.
        signed_in: Whether an account of the provider is bound to the address yet.
    """

    email: str
    role: Role
    added_by: str
    since: datetime
    signed_in: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready fields (``since`` in ISO 8601)."""
        return {"email": self.email, "role": self.role, "added_by": self.added_by,
                "since": self.since.isoformat(), "signed_in": self.signed_in}


def check_email(value: str) -> str:
    """``value`` as a stored address: stripped, lower case, and usable as an annotator name.

    Raises:
        InvalidNameError: not an e-mail address, or one the label store cannot take as a name.
    """
    email = value.strip().lower()
    if not _EMAIL.match(email):
        raise InvalidNameError(f"{shown(value, 40)} is not an e-mail address (name@domain.tld)")
    return check_name(email, "annotator")


class TeamStore:
    """Roles, bound identities and the audit trail in the label store's file.

    Args:
        db: an open :class:`~labels.stores.db.Database`; the ``team`` migrations are applied to it.
        labels: the label store of the same database: the audit trail lists its labels.
    """

    TABLES = ("audit", "team_assignments", "team_identities", "team_roles", "team_sign_outs")
    """The tables this store owns: no other store's SQL names them."""

    def __init__(self, db: Database, labels: LabelStore) -> None:
        """Use ``db``, applying the ``team`` migrations it lacks."""
        self.db = db
        self.labels = labels
        db.ensure_migrated("team", TEAM_MIGRATIONS)

    # -- roles ------------------------------------------------------------------------------

    def members(self) -> list[Member]:
        """Everyone with a role now, owners first, then by address."""
        rows = self.db.records(
            f"SELECT r.email, r.role, r.actor, r.changed_at, b.subject IS NOT NULL AS signed_in "
            f"FROM ({_CURRENT_ROLES}) r LEFT JOIN ({_CURRENT_BINDINGS}) b USING (email)"
        )
        members = [Member(r["email"], r["role"], r["actor"], r["changed_at"], bool(r["signed_in"]))
                   for r in rows if r["role"] is not None]
        return sorted(members, key=lambda m: (ROLES.index(m.role), m.email))

    def role_of(self, email: str) -> Role | None:
        """The role of ``email`` now, or None."""
        row = self.db.fetchone(_ROLE_OF, [email.strip().lower()])
        return None if row is None else row[0]

    def set_role(self, email: str, role: Role | None, *, actor: str) -> Role | None:
        """Give ``email`` the role ``role`` (None removes it); returns the role it had.

        Raises:
            InvalidNameError: a bad address or role.
            NotFoundError: removing someone without a role.
            TeamError: the change would leave the team without an owner.
        """
        email = check_email(email)
        if role is not None and role not in ROLES:
            raise InvalidNameError(f"unknown role {shown(role, 20)}: use one of "
                                   f"{', '.join(ROLES)}")
        with self.db.transaction() as cur:
            found = cur.execute(_ROLE_OF, [email]).fetchone()
            before = None if found is None else found[0]
            if role is None and before is None:
                raise NotFoundError(f"{email} has no role (see `calibrate users list`)")
            if before == role:
                return before
            if before == "owner":
                owners = cur.execute(
                    f"SELECT count(*) FROM ({_CURRENT_ROLES}) WHERE role = 'owner'").fetchone()
                if owners is not None and owners[0] <= 1:
                    raise TeamError(f"{email} is the only owner: make someone else an owner "
                                    "first (`calibrate users add EMAIL --role owner`)")
            cur.execute("INSERT INTO team_roles (email, role, actor) VALUES (?, ?, ?)",
                        [email, role, actor])
            _audit(cur, actor, "role", email, before, role)
        return before

    # -- identities -------------------------------------------------------------------------

    def sign_in(self, email: str, *, issuer: str, subject: str) -> Role | None:
        """The role of a signed-in person, binding their account to the address on first use.

        Args:
            email: The address the provider vouches for.
            issuer: The provider's ``iss``.
            subject: The provider's ``sub`` for this account.

        Raises:
            TeamError: the address signed in before from another account.
        """
        email = check_email(email)
        role = self.role_of(email)
        if role is None:
            return None  # nobody to bind yet: an owner has to add the address first
        with self.db.transaction() as cur:
            bound = _binding(cur, email)
            if bound is None:
                cur.execute(
                    "INSERT INTO team_identities (email, issuer, subject) VALUES (?, ?, ?)",
                    [email, issuer, subject])
                _audit(cur, email, "sign-in", email, None, {"issuer": issuer, "subject": subject})
                return role
        if bound != (issuer, subject):
            raise TeamError(
                f"{email} first signed in from another account of the identity provider; this "
                "one is not let in. If the address moved to a new account, an owner releases "
                f"it: `calibrate users release {email}`")
        return role

    def release_identity(self, email: str, *, actor: str) -> bool:
        """Let the next sign-in of ``email`` bind a new account; False when none was bound."""
        email = check_email(email)
        with self.db.transaction() as cur:
            bound = _binding(cur, email)
            if bound is None:
                return False
            cur.execute("INSERT INTO team_identities (email) VALUES (?)", [email])
            _audit(cur, actor, "sign-in", email, {"issuer": bound[0], "subject": bound[1]}, None)
        return True

    def sign_out(self, email: str, *, at: float) -> None:
        """Note that ``email`` signed out at ``at`` (seconds since the epoch).

        Every session the address started before then is over (:meth:`signed_out_since`),
        including a copy of its sign-in cookie someone kept.
        """
        email = check_email(email)
        with self.db.transaction() as cur:
            cur.execute("INSERT INTO team_sign_outs (email, signed_out_at) VALUES (?, ?)",
                        [email, at])
            _audit(cur, email, "sign-out", email, None, None)

    def signed_out_since(self, email: str, issued_at: float) -> bool:
        """Whether ``email`` signed out after a sign-in whose token was issued at ``issued_at``.

        Token times are whole seconds: a sign-in in the same second as the sign-out counts
        as after it (a person signing in again at once is not turned away).
        """
        row = self.db.fetchone(
            "SELECT max(signed_out_at) FROM team_sign_outs WHERE email = ?",
            [email.strip().lower()])
        return row is not None and row[0] is not None and issued_at < math.floor(row[0])

    # -- assignments --------------------------------------------------------------------------

    def assignments(self, dataset: str, criterion: str) -> dict[str, tuple[str, ...]]:
        """Annotator → the rows assigned to them now (not withdrawn), in the order dealt."""
        rows = self.db.fetchall(
            f"SELECT annotator, item_id FROM ({_CURRENT_ASSIGNMENTS}) "
            "ORDER BY annotator, assignment_id", [dataset, criterion])
        out: dict[str, list[str]] = {}
        for annotator, item_id in rows:
            out.setdefault(annotator, []).append(item_id)
        return {a: tuple(items) for a, items in out.items()}

    def assign(self, dataset: str, criterion: str, dealt: Mapping[str, Sequence[str]], *,
               actor: str) -> int:
        """Record one batch of assignments; returns its batch id.

        Args:
            dataset: The dataset.
            criterion: The criterion the rows are to be labelled for.
            dealt: annotator → rows (from :func:`labels.assignments.deal_rows`).
            actor: Who assigned them (an owner's address or ``cli:<user>``).

        Raises:
            TeamError: an annotator without a role that labels (annotator or owner).
        """
        wanted = {check_email(a): list(rows) for a, rows in dealt.items()}
        with self.db.transaction() as cur:
            _check_labellers(cur, wanted)
            row = cur.execute("SELECT coalesce(max(batch_id), 0) + 1 FROM team_assignments"
                              ).fetchone()
            batch_id = int(row[0]) if row is not None else 1
            cur.executemany(
                "INSERT INTO team_assignments (dataset, criterion, item_id, annotator, "
                "batch_id, actor) VALUES (?, ?, ?, ?, ?, ?)",
                [[dataset, criterion, item, annotator, batch_id, actor]
                 for annotator, rows in wanted.items() for item in rows])
            _audit(cur, actor, "assign", f"{dataset}/{criterion}", None,
                   {"batch": batch_id, "rows": {a: len(r) for a, r in wanted.items()}})
        return batch_id

    def check_labellers(self, emails: Sequence[str]) -> list[str]:
        """``emails`` normalised, if each has a role that labels (annotator or owner).

        Raises:
            InvalidNameError: a bad address.
            TeamError: someone without such a role.
        """
        wanted = [check_email(e) for e in emails]
        with self.db.transaction() as cur:
            _check_labellers(cur, wanted)
        return wanted

    def withdraw(self, dataset: str, criterion: str, annotator: str, *, actor: str) -> int:
        """Withdraw every row assigned to ``annotator`` (their labels stay); returns how many."""
        annotator = check_email(annotator)
        with self.db.transaction() as cur:
            rows = cur.execute(
                f"SELECT item_id FROM ({_CURRENT_ASSIGNMENTS}) WHERE annotator = ?",
                [dataset, criterion, annotator]).fetchall()
            if rows:
                cur.executemany(
                    "INSERT INTO team_assignments (dataset, criterion, item_id, annotator, "
                    "batch_id, withdrawn, actor) VALUES (?, ?, ?, ?, 0, true, ?)",
                    [[dataset, criterion, r[0], annotator, actor] for r in rows])
                _audit(cur, actor, "withdraw", f"{dataset}/{criterion}",
                       {"annotator": annotator, "rows": len(rows)}, None)
        return len(rows)

    # -- audit ------------------------------------------------------------------------------

    def record(self, actor: str, action: str, subject: str, *, before: Any = None,
               after: Any = None) -> None:
        """Add one entry to the audit trail (e.g. an export)."""
        with self.db.transaction() as cur:
            _audit(cur, actor, action, subject, before, after)

    def audit(self, *, limit: int | None = None) -> list[AuditEntry]:
        """The audit trail, oldest first: these entries and every label with its previous one.

        Args:
            limit: Only the newest ``limit`` entries.
        """
        if limit is not None and limit <= 0:
            return []
        # The newest entries of each side first, so a limit reads only those, merged newest
        # first (a label before an entry of the same moment), then oldest first.
        rows = self.db.fetchall(
            "SELECT recorded_at, actor, action, subject, before_value, after_value "
            "FROM audit ORDER BY recorded_at DESC, audit_id DESC LIMIT ?", [limit])
        merged = _newest_merged([AuditEntry.from_row(r) for r in rows],
                                self.labels.label_events(limit))
        return merged[:limit][::-1]


def _newest_merged(entries: list[AuditEntry], labels: list[AuditEntry]) -> list[AuditEntry]:
    """Two lists of entries, each newest first, as one, a label before an entry of its moment.

    The labels can be a million and the entries a few: each entry's place among the labels is
    found by bisection and the labels between are copied in slices, not compared one by one.
    """
    out: list[AuditEntry] = []
    start = 0
    for entry in entries:
        low, high = start, len(labels)
        while low < high:  # the first label older than the entry
            middle = (low + high) // 2
            if labels[middle].at >= entry.at:
                low = middle + 1
            else:
                high = middle
        out += labels[start:low]
        out.append(entry)
        start = low
    out += labels[start:]
    return out


def _binding(cur: Any, email: str) -> tuple[str, str] | None:
    """The account bound to ``email`` now (issuer, subject), or None."""
    row = cur.execute(
        f"SELECT issuer, subject FROM ({_CURRENT_BINDINGS}) WHERE email = ?", [email]).fetchone()
    return None if row is None or row[1] is None else (str(row[0]), str(row[1]))


def _check_labellers(cur: Any, emails: Sequence[str] | Mapping[str, Any]) -> None:
    for email in emails:
        found = cur.execute(_ROLE_OF, [email]).fetchone()
        if found is None or found[0] not in ("annotator", "owner"):
            raise TeamError(f"{email} cannot be assigned rows: only annotators and owners "
                            "label (`calibrate users add EMAIL --role annotator`)")


def _audit(cur: Any, actor: str, action: str, subject: str, before: Any, after: Any) -> None:
    cur.execute(
        "INSERT INTO audit (actor, action, subject, before_value, after_value) "
        "VALUES (?, ?, ?, ?, ?)",
        [actor, action, subject,
         None if before is None else json.dumps(before),
         None if after is None else json.dumps(after)],
    )


__all__ = ["ROLES", "ROLE_PAGES", "AuditEntry", "Member", "Role", "TeamError", "TeamStore",
           "check_email"]
