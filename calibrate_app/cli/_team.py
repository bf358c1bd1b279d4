"""``calibrate users`` and ``calibrate audit``: team mode's roles and its audit trail.

Roles are given from the CLI by whoever owns the database file (the first owner has to be set
here: nobody can sign in to a team without one); the app shows them to owners.
"""

from __future__ import annotations

import getpass

import click

from calibrate_app.cli._context import AppContext, echo_json, pass_app, pass_app_and_json

# judges.workflows.team.ROLES, without importing it
ROLE_CHOICES = ("owner", "annotator", "viewer")


def cli_actor() -> str:
    """Who the audit trail names for a CLI command: the local account that ran it."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no name for this uid (e.g. in a bare container)
        import os

        return f"cli:uid {os.getuid()}"


@click.group("users")
def users_group() -> None:
    """Who may use the app in team mode (CALIBRATE_AUTH=oidc), and as what.

    owner: everything; annotator: the Label page and their own labels only (blind to judges
    and to other annotators); viewer: the Calibration and Export pages. People sign in with
    the identity provider; their e-mail address must have a role here first.
    """


@users_group.command("add")
@click.argument("email")
@click.option("--role", type=click.Choice(ROLE_CHOICES), required=True,
              help="owner, annotator or viewer.")
@pass_app
def users_add(app: AppContext, email: str, role: str) -> None:
    """Give EMAIL a role (or change the one it has)."""
    from typing import cast

    from judges.workflows.team import Role, set_role

    before = set_role(app.workspace, email, cast(Role, role), actor=cli_actor())
    address = email.strip().lower()
    if before is None:
        click.echo(f"{address} is now {role}.")
    elif before == role:
        click.echo(f"{address} was already {role}: nothing changed.")
    else:
        click.echo(f"{address}: {before} -> {role}.")


@users_group.command("remove")
@click.argument("email")
@pass_app
def users_remove(app: AppContext, email: str) -> None:
    """Take EMAIL's role away (their labels stay, under their address)."""
    from judges.workflows.team import remove_member

    before = remove_member(app.workspace, email, actor=cli_actor())
    click.echo(f"{email.strip().lower()} was {before}; now has no role.")


@users_group.command("release")
@click.argument("email")
@pass_app
def users_release(app: AppContext, email: str) -> None:
    """Let EMAIL's next sign-in come from a new account of the identity provider.

    The first account an address signs in with is bound to it; another account with the same
    address is refused until an owner releases it.
    """
    from judges.workflows.team import release_identity

    if release_identity(app.workspace, email, actor=cli_actor()):
        click.echo(f"{email.strip().lower()}: the next sign-in binds its account.")
    else:
        click.echo(f"{email.strip().lower()} has no account bound: nothing to release.")


@users_group.command("list")
@pass_app_and_json("everyone with a role")
def users_list(app: AppContext, as_json: bool) -> None:
    """Everyone with a role, owners first."""
    from judges.workflows.team import members as team_members

    members = team_members(app.read_workspace)
    if as_json:
        echo_json([m.to_dict() for m in members])
        return
    if not members:
        click.echo("Nobody has a role yet. Make yourself the first owner: "
                   "calibrate users add YOU@EXAMPLE.ORG --role owner")
        return
    for m in members:
        seen = "signed in" if m.signed_in else "not signed in yet"
        click.echo(f"{m.email:<40} {m.role:<10} {seen}  (by {m.added_by}, "
                   f"{m.since:%Y-%m-%d %H:%M})")


@click.command("audit")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Only the newest N entries.")
@pass_app_and_json("the audit trail")
def audit_command(app: AppContext, limit: int | None, as_json: bool) -> None:
    """The audit trail: every label (with its previous value), role change, sign-in and export.

    Oldest first. Nothing in it is ever updated or deleted.
    """
    from judges.workflows.team import audit

    entries = audit(app.workspace, limit=limit)
    if as_json:
        echo_json([e.to_dict() for e in entries])
        return
    if not entries:
        click.echo("The audit trail is empty.")
        return
    for e in entries:
        change = f"{_short(e.before)} -> {_short(e.after)}"
        click.echo(f"{e.at:%Y-%m-%d %H:%M:%S}  {e.actor}  {e.action}  {e.subject}  {change}")


def _short(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict) and "verdict" in value:
        return str(value["verdict"])
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


@click.group("assignments")
def assignments_group() -> None:
    """Rows assigned to annotators (team mode): served to each of them before the shared queue.

    Rows are dealt in the queue's own order from those nobody labelled or was assigned yet, so
    assigning changes who labels a row, never which rows get labelled (the report stays valid).
    """


def _overlap(value: str) -> int | None:
    if value == "all":
        return None
    try:
        number = int(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a number of annotators or 'all'") from None
    if number < 1:
        raise click.BadParameter("overlap must be at least 1")
    return number


_CRITERION = click.option("--criterion", default="faithfulness", show_default=True,
                          help="The criterion the rows are labelled for.")


@assignments_group.command("add")
@click.argument("dataset")
@click.option("--to", "annotators", multiple=True, required=True, metavar="EMAIL",
              help="An annotator's address (repeat the option for each).")
@click.option("--batch", type=click.IntRange(min=1), required=True,
              help="Rows per annotator.")
@click.option("--overlap", default="1", show_default=True, metavar="K|all",
              help="Annotators per row: a number, or 'all' for every one of them.")
@_CRITERION
@pass_app
def assignments_add(app: AppContext, dataset: str, annotators: tuple[str, ...], batch: int,
                    overlap: str, criterion: str) -> None:
    """Deal a batch of DATASET's free rows to the annotators given with --to."""
    from judges.workflows.queue import assign_batch

    try:
        dealt = assign_batch(app.workspace, dataset, criterion, annotators, batch=batch,
                             overlap=_overlap(overlap), actor=cli_actor())
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    click.echo(dealt.describe())
    wanted = batch * len(dealt.rows)
    if sum(len(rows) for rows in dealt.rows.values()) < wanted:
        click.echo(f"Only {dealt.free:,} free row(s) were left, fewer than the batch asked for.")


@assignments_group.command("list")
@click.argument("dataset")
@_CRITERION
@pass_app_and_json("each annotator's assignment")
def assignments_list(app: AppContext, dataset: str, criterion: str, as_json: bool) -> None:
    """Each annotator's assigned rows of DATASET and how many they have labelled."""
    from judges.workflows.team import assignment_progress

    rows = assignment_progress(app.read_workspace, dataset, criterion)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo(f"No rows of {dataset!r} are assigned for {criterion!r}.")
        return
    for r in rows:
        click.echo(f"{r['annotator']:<40} {r['labelled']:>6,} / {r['assigned']:,} labelled")


@assignments_group.command("withdraw")
@click.argument("dataset")
@click.argument("email")
@_CRITERION
@pass_app
def assignments_withdraw(app: AppContext, dataset: str, email: str, criterion: str) -> None:
    """Withdraw every row of DATASET assigned to EMAIL (their labels stay)."""
    from judges.workflows.team import withdraw

    count = withdraw(app.workspace, dataset, criterion, email, actor=cli_actor())
    click.echo(f"{count:,} row(s) withdrawn from {email.strip().lower()}.")


def register(cli: click.Group) -> None:
    """Add these commands to the top-level group."""
    cli.add_command(users_group)
    cli.add_command(assignments_group)
    cli.add_command(audit_command)
