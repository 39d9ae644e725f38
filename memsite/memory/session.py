"""The live session's writes of ``Memory``: starting it, its steps, files, pending actions
and checkpoints, and ending it. ``Memory`` takes them from ``LiveSession``; each loads the
live session's module only when called, so another write loads none of it (issue 35)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING

from ..store import tree
from ..store.markup import slugify
from ..store.model import SessionStart
from ..store.session import SUMMARIZER_TIMEOUT, THRESHOLD

if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path

    from ..store.intake import Intake
    from ..store.journal import Journal
    from ..store.model import HotContext
    from ..store.session.checkpoints import Checkpoint, Checkpointed


class LiveSession:
    """The methods of ``Memory`` that change its live session; ``Memory`` gives them its
    root, its intake and journal, the moment of a write and where notices go."""

    root: Path

    if TYPE_CHECKING:

        @property
        def _intake(self) -> Intake: ...

        @property
        def _journal(self) -> Journal: ...

        def _when(self, at: object) -> dt.datetime: ...

        def _notice(self, message: str) -> None: ...

        def session(self) -> HotContext | None: ...

    def start_session(
        self, task: str, session_id: str | None = None, *, at: object = None
    ) -> SessionStart:
        """Start a session; an unfinished one still in ``hot/`` is archived to warm first."""
        task = self._intake.line(task, "task")
        now = self._when(at)
        sid = (
            self._intake.line(session_id, "session id")
            if session_id is not None
            else (f"{now:%Y%m%d-%H%M%S}-{slugify(task, 32)}")
        )
        tree.check_root(self.root)
        return live_module().start(self._journal, sid, task, now, chosen=session_id is not None)

    def end_session(
        self, summary: str | None = None, *, drop_pending: bool = False, at: object = None
    ) -> str:
        """Archive the live session into the warm log and clear ``hot/``; returns the log id.

        Its open pending actions carry over to the next session started in the tree, unless
        ``drop_pending``."""
        now = self._when(at)
        summary = self._intake.text(summary, "summary")
        tree.check_root(self.root)
        return live_module().end(self._journal, summary, now, drop_pending=drop_pending)

    def retask(self, task: str, *, only_if: str | None = None, at: object = None) -> bool:
        """Rename the live session's task (only while it is still ``only_if``)."""
        task = self._intake.line(task, "task")
        return live_module().retask(self.root, task, self._when(at), only_if=only_if)

    def touch(self, files: Iterable[str], *, at: object = None) -> bool:
        """Add files to the live session's files without a log entry."""
        names = [self._intake.line(name, "file") for name in files]
        return live_module().touch(self.root, names, self._when(at))

    def progress(self, step: str, files: Iterable[str] = (), *, at: object = None) -> str:
        """Record the current step (and files touched) in hot and in the warm log."""
        step = self._intake.line(step, "step")
        files = [self._intake.line(name, "file") for name in files]
        now = self._when(at)
        tree.check_root(self.root)
        return live_module().progress(self._journal, step, files, now)

    def checkpoint(
        self, trigger: str = "manual", summary: str | None = None, *,
        summarizer: str | None = None, timeout: float = SUMMARIZER_TIMEOUT,
        used: int | None = None, window: int | None = None, threshold: float = THRESHOLD,
        tokens_before: int | None = None, tokens_after: int | None = None,
        completes: bool = False, at: object = None,
    ) -> Checkpointed:  # fmt: skip
        """Record a checkpoint of the live session in the day's warm log (issue 11). Its
        summary is ``summary``, else what the ``summarizer`` command prints for the session's
        material, else one memsite extracts. With ``used`` and ``window`` nothing is written
        below ``threshold``; ``completes`` delivers the summary of the latest checkpoint."""
        from ..store.session import checkpoints  # a checkpoint's: no other write loads it

        gauge = None if used is None else checkpoints.fullness(used, window or 0, threshold)
        text = self._intake.text(summary, "summary")
        clean = functools.partial(self._intake.text, name="summary")
        how = checkpoints.summary_of(text, summarizer, timeout, clean, self._notice)
        now = self._when(at)
        tree.check_root(self.root)
        return checkpoints.take(
            self._journal, trigger, how, now, gauge=gauge, tokens_before=tokens_before,
            tokens_after=tokens_after, completes_latest=completes,
        )  # fmt: skip

    def latest_checkpoint(self) -> Checkpoint | None:
        """The live session's newest checkpoint, or None."""
        from ..store.session import checkpoints

        context = self.session()
        return checkpoints.latest(self.root, context) if context else None

    def pending_add(self, text: str, *, at: object = None) -> list[str]:
        text = self._intake.line(text, "pending action")
        now = self._when(at)
        tree.check_root(self.root)
        return live_module().pending_add(self._journal, text, now)

    def pending_done(self, text: str, *, at: object = None) -> list[str]:
        """Mark a pending action done (exact text, or a unique part of it); it is logged to warm."""
        text = self._intake.line(text, "pending action")
        now = self._when(at)
        tree.check_root(self.root)
        return live_module().pending_done(self._journal, text, now)


def live_module() -> ModuleType:
    """The live session's module, loaded by the methods that change the session (issue 35)."""
    from ..store.session import live

    return live
