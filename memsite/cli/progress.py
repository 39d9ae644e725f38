"""A one-line progress display on stderr for work that takes a while (issue 13): index builds
(files indexed) and site builds (pages written).

It shows only on a terminal, only once the work has run for :data:`DELAY` seconds, never with
``--quiet``, and it is wiped when the work ends, so piped output and quick commands are
untouched.
"""

from __future__ import annotations

import sys
import time

import click

DELAY = 1.0  # seconds of work before anything is shown
EVERY = 0.1  # seconds between two redraws


def on_terminal(stream: str = "stderr") -> bool:
    """Whether standard error (or ``stream``) is a terminal rather than a pipe or a file."""
    handle = getattr(sys, stream, None)
    try:
        return bool(handle is not None and handle.isatty())
    except ValueError:  # closed
        return False


class Progress:
    """``progress(done, total)`` draws ``{what}: done/total`` in place; the last call (or
    ``close()``) wipes it."""

    def __init__(self, what: str, *, shown: bool) -> None:
        self.what = what
        self.shown = shown
        self.started = time.monotonic()
        self.drawn = 0.0  # when it was last drawn; 0: never

    def __call__(self, done: int, total: int) -> None:
        if not self.shown:
            return
        if done >= total:  # the last one: the work is over
            self.close()
            return
        now = time.monotonic()
        if now - self.started < DELAY or now - self.drawn < EVERY:
            return
        self.drawn = now
        click.echo(f"\r{self.what}: {done:,}/{total:,}\x1b[K", err=True, nl=False, color=True)

    def close(self) -> None:
        if self.drawn:
            click.echo("\r\x1b[K", err=True, nl=False, color=True)
            self.drawn = 0.0
