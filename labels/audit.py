"""One line of the audit trail, whichever store it comes from.

The team store keeps role changes, sign-ins and exports (its ``audit`` table); the label store
keeps every label version (its ``labels`` table). Each reads its own as :class:`AuditEntry`, and
:meth:`labels.stores.team_store.TeamStore.audit` merges the two.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class AuditEntry:
    """One line of the audit trail.

    Attributes:
        at: When.
        actor: Who (an e-mail address, ``cli:<local user>``, or a label's annotator).
        action: ``role``, ``sign-in``, ``export`` or ``label``.
        subject: What it was done to (an address, a file, ``dataset/item/criterion``).
        before: The value before (None: there was none).
        after: The value after (None: removed).
    """

    at: datetime
    actor: str
    action: str
    subject: str
    before: Any
    after: Any

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> AuditEntry:
        """The entry of a row ``(at, actor, action, subject, before, after)`` as stored.

        ``before`` and ``after`` are JSON text there (or NULL).
        """
        return cls(row[0], row[1], row[2], row[3], _json(row[4]), _json(row[5]))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready fields (``at`` in ISO 8601)."""
        return {"at": self.at.isoformat(), "actor": self.actor, "action": self.action,
                "subject": self.subject, "before": self.before, "after": self.after}


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


__all__ = ["AuditEntry"]
