"""``memsite init --claude``: the hooks block of Claude Code's ``.claude/settings.json``
(issue 23), written into a new file or merged into the project's own; and the same merge for
another CLI's hooks file in Claude Code's format (``harnesses/setup/``, issue 37).

Each event memsite answers gets one matcher group whose command is the absolute path of the
memsite that ran ``init`` (the harness's PATH may not hold a virtualenv's ``bin/``). Only
memsite's own hook entries are replaced, inside the groups that hold them (issue 34.7: a
guard script in the same group as an old memsite hook was dropped with the group); every
other hook, group and setting is kept, and writing the same block twice changes nothing. A
settings file that is a link is written through to its target, inside the repository only.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path, PurePath
from typing import Any

from ..errors import InvalidInput
from ..store import reading, storage

SETTINGS = ".claude/settings.json"
EDITS = "Edit|Write|MultiEdit|NotebookEdit"
TIMEOUT = 10  # seconds Claude Code waits; memsite answers within 5
LIMIT = 1 << 20  # bytes of settings read; Claude Code's own are a few KB
# event -> matcher ("" for events that take none)
EVENTS = {
    "SessionStart": "startup|resume|clear|compact|fork",
    "UserPromptSubmit": "",
    "PreToolUse": EDITS,
    "PostToolUse": f"{EDITS}|Bash|TodoWrite|TaskCreate|TaskUpdate",
    "PostToolUseFailure": f"{EDITS}|Bash",
    "PreCompact": "auto|manual",
    "PostCompact": "auto|manual",
    "SessionEnd": "",
}


def hook_command(harness: str | None = None) -> str:
    """The command that runs this memsite's ``hook``, by absolute path; for the agent CLI
    ``harness`` (another than Claude Code), with ``--harness`` naming it."""
    script = Path(sys.executable).parent / "memsite"
    named = f" --harness {shlex.quote(harness)}" if harness else ""
    if script.is_file():
        return f"{shlex.quote(str(script))} hook{named}"
    return f"{shlex.quote(sys.executable)} -m memsite hook{named}"


def is_ours(hook: object, key: str = "command", harness: str | None = None) -> bool:
    """Whether a hook entry runs ``memsite hook`` (as :func:`hook_command` writes it: a
    ``memsite`` program or ``python -m memsite``, maybe with ``--harness NAME``), not another
    tool's script that only names memsite. ``key`` names the entry's command field (Copilot
    CLI's is ``bash``); with ``harness``, only a ``--harness`` naming it is memsite's own."""
    command = hook.get(key) if isinstance(hook, dict) else None
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) >= 4 and words[-2] == "--harness" and harness in (None, words[-1]):
        words = words[:-2]  # another CLI's: ``memsite hook --harness NAME``
    return (
        len(words) >= 2
        and words[-1] == "hook"
        and (PurePath(words[0]).name == "memsite" or words[-3:-1] == ["-m", "memsite"])
    )


Ours = Callable[[object], bool]


def without_ours(group: object, ours: Ours = is_ours) -> object | None:
    """``group`` (a matcher group: ``{"hooks": [...]}``) without memsite's hook entries;
    None when they were all it held."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    if not isinstance(group, dict) or not isinstance(hooks, list):
        return group
    kept = [hook for hook in hooks if not ours(hook)]
    if len(kept) == len(hooks):
        return group
    return {**group, "hooks": kept} if kept else None


def _event_groups(groups: list[Any], matcher: str, entry: dict[str, Any]) -> list[Any]:
    """An event's groups with memsite's ``entry`` in place of the first memsite hook of a
    group with ``matcher`` (its neighbours kept), or else in a group of its own at the end;
    memsite's hooks in other groups are taken out, and a group left empty goes."""
    home = next(
        (
            i
            for i, group in enumerate(groups)
            if isinstance(group, dict)
            and group.get("matcher", "") == matcher
            and isinstance(group.get("hooks"), list)
            and any(is_ours(hook) for hook in group["hooks"])
        ),
        None,
    )
    out: list[Any] = []
    for i, group in enumerate(groups):
        if i == home:
            hooks = group["hooks"]
            first = next(j for j, hook in enumerate(hooks) if is_ours(hook))
            rest = [hook for hook in hooks[first + 1 :] if not is_ours(hook)]
            out.append({**group, "hooks": [*hooks[:first], entry, *rest]})
            continue
        kept = without_ours(group)
        if kept is not None:
            out.append(kept)
    if home is None:
        out.append({"matcher": matcher, "hooks": [entry]} if matcher else {"hooks": [entry]})
    return out


def merged(
    settings: dict[str, Any],
    command: str,
    events: Mapping[str, str] = EVENTS,
    timeouts: Mapping[str, int] | None = None,
    name: str = SETTINGS,
) -> dict[str, Any]:
    """``settings`` with memsite's hook for every event of ``events`` (event -> matcher),
    each waited for ``TIMEOUT`` seconds unless ``timeouts`` says otherwise, every other hook
    kept where it is; ``name`` is the file, as errors name it."""
    out = dict(settings)
    hooks = out.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f"{name}: 'hooks' is not an object; fix it by hand first")
    hooks = dict(hooks)
    for event, matcher in events.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{name}: hooks.{event} is not a list; fix it by hand first")
        wait = (timeouts or {}).get(event, TIMEOUT)
        entry = {"type": "command", "command": command, "timeout": wait}
        hooks[event] = _event_groups(groups, matcher, entry)
    out["hooks"] = hooks
    return out


def _target(project: Path, path: Path) -> Path:
    """Where the settings are written: the file ``path`` names, through any link, when that
    is inside the repository (a link stays a link); a link out of it is refused."""
    real = path.resolve()
    if project.resolve() not in real.parents:
        raise InvalidInput(
            f"{path}: leads to {real} through a link, outside the repository; not changed: add "
            "memsite's hooks there by hand, or replace the link with a file"
        )
    return real


def _read(project: Path, path: Path) -> dict[str, Any]:
    try:
        raw = reading.read_inside(project, path, limit=LIMIT)
    except FileNotFoundError:
        return {}
    try:
        existing = json.loads(raw)
    except RecursionError:
        raise InvalidInput(f"{path}: JSON nested too deeply; fix it by hand first") from None
    except (ValueError, UnicodeDecodeError) as err:
        if _commented(raw):
            raise InvalidInput(
                f"{path}: holds comments, which writing it again would lose; not changed: add "
                "memsite's hooks by hand (docs/agents.md), or take the comments out"
            ) from None
        raise InvalidInput(f"{path}: not JSON ({err}); fix it by hand first") from None
    if not isinstance(existing, dict):
        raise InvalidInput(f"{path}: not a JSON object; fix it by hand first")
    return existing


# a JSON string (kept whole), or a comment: what JSON with comments adds to JSON
_TOKEN = re.compile(rb'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)


def _commented(raw: bytes) -> bool:
    """Whether ``raw`` is JSON once its ``//`` and ``/* */`` comments are left out: a CLI
    that reads its settings as JSON with comments (Qwen Code) takes it as it is."""
    bare = _TOKEN.sub(lambda m: m.group(0) if m.group(0).startswith(b'"') else b"", raw)
    if bare == raw:
        return False
    try:
        json.loads(bare)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return True


def write_settings(project: Path, command: str | None = None) -> tuple[Path, bool]:
    """Write or merge ``project/.claude/settings.json``; whether the file changed. The file
    keeps its mode, and a link keeps pointing at the file it names, which is rewritten."""
    return write_event_hooks(project, SETTINGS, None, EVENTS, command=command)


def write_event_hooks(
    project: Path,
    rel: str,
    harness: str | None,
    events: Mapping[str, str],
    timeouts: Mapping[str, int] | None = None,
    command: str | None = None,
) -> tuple[Path, bool]:
    """Write or merge ``project/rel``, a hooks file in Claude Code's format (Claude Code's,
    Codex's, Gemini CLI's, Qwen Code's): memsite's hook for every event of ``events`` (event
    -> matcher), ``command`` or this memsite's ``hook --harness harness``, waited for as
    ``timeouts`` says (:func:`merged`); whether the file changed."""
    wanted = command or hook_command(harness)
    return write_hooks(
        project, rel, lambda existing: merged(existing, wanted, events, timeouts, rel)
    )


def write_hooks(
    project: Path, rel: str, merge: Callable[[dict[str, Any]], dict[str, Any]]
) -> tuple[Path, bool]:
    """Write or merge the JSON hooks file ``project/rel`` (an agent CLI's: Claude Code's
    settings, Codex's hooks) with ``merge``; whether the file changed. The file keeps its
    mode, and a link keeps pointing at the file it names, which is rewritten."""
    path = project / rel
    target = _target(project, path)
    existing = _read(project, target)
    wanted = merge(existing)
    try:
        if wanted == existing:
            return path, False
        text = json.dumps(wanted, indent=2) + "\n"
    except RecursionError:
        raise InvalidInput(f"{path}: JSON nested too deeply; fix it by hand first") from None
    storage.replace(project, target, text)
    return path, True
