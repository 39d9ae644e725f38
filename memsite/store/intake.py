"""Text handed to a write, made fit to store: checked as one line or as a body, then
redacted, each redaction reported through ``notice``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ALLOW_SECRETS, COMMIT, PATHS, BadValue, Param
from . import inputs
from .redact import redact


@dataclass(frozen=True)
class Intake:
    """Checks and redacts what a caller writes; ``allow_secrets`` keeps secrets as given."""

    allow_secrets: bool
    notice: Callable[[str], None]

    def redact(self, text: str, name: str | Param) -> str:
        if self.allow_secrets or not text:
            return text
        clean, found = redact(text)
        if found:
            kinds = ", ".join(sorted({item.kind for item in found}))
            # the MCP tools take no allow_secrets: an agent is told what was redacted, no more
            keep = f"; pass {ALLOW_SECRETS} to keep them" if ALLOW_SECRETS.offered else ""
            self.notice(f"redacted {len(found)} secret(s) in {name} ({kinds}){keep}")
        return clean

    def line(self, value: str | None, name: str | Param) -> str:
        """A one-line value (title, action, step), redacted."""
        return self.redact(inputs.one_line(value, name), name)

    def cut_line(self, value: str | None, name: str | Param) -> str:
        """A one-line value from outside (a harness's command, a file's name): redacted whole,
        then cut to ``LINE_LIMIT`` characters with ``CUT_MARK``, never refused for its
        length (issue 34)."""
        return inputs.cut(self.redact(inputs.one_line(value, name, limit=None), name))

    def text(self, value: str | None, name: str | Param) -> str:
        """A body or other multi-line value (empty when not given), redacted."""
        return self.redact(inputs.multi_line(value, name), name)

    def required(self, value: str | None, name: str | Param) -> str:
        """A multi-line value that must say something (a decision's why); an empty one is a
        ``BadValue``."""
        text = self.text(value, name)
        if not text:
            raise BadValue(f"{name} is empty: say why")
        return text

    def tag(self, value: str) -> str:
        return self.redact(inputs.tag(value), "tag")

    def detail_key(self, value: str) -> str:
        """A detail key, redacted without the colon of ``[redacted: kind]``, which would end
        the key early when the detail is read back."""
        key = inputs.detail_key(value)
        clean = self.redact(key, "detail key")
        return clean if clean == key else clean.replace(":", "")

    def details(self, details: Mapping[str, str] | None, cut: bool = False) -> dict[str, str]:
        """An activity's details: each key and value checked and redacted, empty values kept;
        ``cut``: a value over the one-line limit is cut (see :meth:`cut_line`), not refused."""
        value = self.cut_line if cut else self.line
        return {
            self.detail_key(k): value(v, f"detail {k!r}") if str(v).strip() else ""
            for k, v in (details or {}).items()
        }

    def code(
        self, root: Path, paths: Iterable[str], commit: str | None, touched: Iterable[str] = ()
    ) -> dict[str, str]:
        """The ``paths`` and ``commit`` fields of an entry in the tree at ``root`` (issue 14):
        checked, redacted, normalised; ``touched`` (the session's files) are kept only when
        they are paths of the repository."""
        if isinstance(paths, str):
            paths = [paths]
        given = [self.line(path, PATHS) for path in paths]
        ref = self.line(commit, COMMIT) if commit is not None else None
        loose = [self.line(path, "file") for path in touched]
        if not given and ref is None and not loose:
            return {}  # most writes name no code: the matcher and git stay unloaded (issue 35)
        from .code import fields as code_fields

        fields, skipped = code_fields(root, given, ref, loose=loose)
        for path in skipped:
            self.notice(f"--paths-from-session: {path!r} is not a path of the repository; left out")
        return fields
