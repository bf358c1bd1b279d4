"""Team mode: who has which role, sign-in and sign-out, and the audit trail.

One workflow for ``calibrate users|audit`` (roles are given from the CLI by whoever owns the
database file) and the app's sign-in (:mod:`calibrate_app.access`), over the team tables of
:attr:`judges.workspace.Workspace.team`, and who is assigned which rows (dealing them out
in the queue's order is part of the label queue: :func:`judges.workflows.queue.assign_batch`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from labels.stores.team_store import ROLE_PAGES, ROLES, AuditEntry, Member, Role, TeamError

if TYPE_CHECKING:
    from judges.workspace import Workspace


def _has_team(workspace: Workspace) -> bool:
    """Whether the file has the team tables (a read-only reader must not create them)."""
    return "team_roles" in workspace.db.table_names()


def set_role(workspace: Workspace, email: str, role: Role, *, actor: str) -> Role | None:
    """Give ``email`` ``role`` (or change the one it has); returns the role it had."""
    return workspace.team.set_role(email, role, actor=actor)


def remove_member(workspace: Workspace, email: str, *, actor: str) -> Role | None:
    """Take ``email``'s role away and unbind its account (its labels stay); the role it had."""
    team = workspace.team
    before = team.set_role(email, None, actor=actor)
    team.release_identity(email, actor=actor)
    return before


def release_identity(workspace: Workspace, email: str, *, actor: str) -> bool:
    """Let ``email``'s next sign-in bind a new account; ``False`` when none was bound."""
    return workspace.team.release_identity(email, actor=actor)


def members(workspace: Workspace) -> list[Member]:
    """Everyone with a role, owners first (none in a file without the team tables)."""
    return workspace.team.members() if _has_team(workspace) else []


def audit(workspace: Workspace, *, limit: int | None = None) -> list[AuditEntry]:
    """The audit trail, oldest first (``limit``: only the newest entries)."""
    return workspace.team.audit(limit=limit)


def sign_in(workspace: Workspace, email: str, *, issuer: str, subject: str) -> Role | None:
    """Record a sign-in (binding the account on the first one); the address's role, if any.

    Raises:
        TeamError: the address is bound to another account of the identity provider.
    """
    return workspace.team.sign_in(email, issuer=issuer, subject=subject)


def signed_out_since(workspace: Workspace, email: str, issued_at: float) -> bool:
    """Whether ``email`` signed out after the sign-in issued at ``issued_at`` (epoch seconds)."""
    return workspace.team.signed_out_since(email, issued_at)


def sign_out(workspace: Workspace, email: str, *, at: float) -> None:
    """Record a sign-out: every session of ``email`` started before ``at`` is over."""
    workspace.team.sign_out(email, at=at)


def assignment_progress(workspace: Workspace, dataset: str,
                        criterion: str) -> list[dict[str, object]]:
    """Each annotator's assigned rows of ``dataset`` and how many of them they labelled.

    Reads only: a database without the team tables (e.g. opened read-only) has no
    assignments, and none are created.
    """
    store = workspace.labels
    store.dataset(dataset)
    if "team_assignments" not in workspace.db.table_names():
        return []
    out: list[dict[str, object]] = []
    for annotator, items in workspace.team.assignments(dataset, criterion).items():
        mine = set(store.labelled_in_order(dataset, annotator, criterion))
        out.append({"annotator": annotator, "assigned": len(items),
                    "labelled": sum(1 for i in items if i in mine)})
    return out


def withdraw(workspace: Workspace, dataset: str, criterion: str, email: str, *,
             actor: str) -> int:
    """Withdraw every row of ``dataset`` assigned to ``email``; how many (labels stay)."""
    return workspace.team.withdraw(dataset, criterion, email, actor=actor)


def record(workspace: Workspace, actor: str, action: str, subject: str) -> None:
    """Add an entry to the audit trail (e.g. an export)."""
    workspace.team.record(actor, action, subject)


__all__ = ["ROLES", "ROLE_PAGES", "AuditEntry", "Member", "Role", "TeamError",
           "assignment_progress", "audit", "members", "record", "release_identity",
           "remove_member", "set_role", "sign_in", "sign_out", "signed_out_since", "withdraw"]
