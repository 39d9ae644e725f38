"""What memory noticed, printed (issue 27): ``decide`` and ``learn`` print the id (or
``--json``) on stdout and one line on stderr for each decision the new one may replace, or the
learning it repeats; ``check --overlaps`` prints pairs of decisions as warnings."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..store.format import Problem
from ..store.model import Written


def report(written: Written, kind: str, as_json: bool) -> None:
    """Print ``written``: its notices on stderr first, then its id or its JSON."""
    for notice in written.may_supersede:
        click.echo(notice.line(), err=True)
    again = written.repeats
    if again is not None:
        click.echo(again.repeated(), err=True)
    if not as_json:
        click.echo(written)
        return
    data: dict[str, object] = {"id": str(written)}
    if kind == "decision":
        data["may_supersede"] = [notice.to_dict() for notice in written.may_supersede]
    else:
        data["repeats"] = again.to_dict() if again is not None else None
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def overlap_warnings(root: Path) -> list[Problem]:
    """``check --overlaps``: one warning per pair of current decisions that govern a common
    path and look like answers to one question (issue 27)."""
    from ..search.notices import overlaps  # check only: no write loads it

    found = []
    for pair in overlaps(root):
        first, second = pair.first, pair.second
        found.append(
            Problem(
                second.path,
                second.line,
                f"decisions {first.id} and {second.id} both govern {pair.path} and look like "
                f"answers to one question (topic {pair.score:.2f}); if one replaces the other, "
                "write its successor with --supersedes",
                "warning",
            )
        )
    return found
