"""What the tests of the real GitHub Copilot CLI share (issue 37): the pinned ``copilot``, the
Messages-API stand-in of ``tests/claude_code.py`` (Copilot speaks Anthropic Messages with
``COPILOT_PROVIDER_TYPE=anthropic``), and ``run_copilot``, which runs ``copilot -p`` in a
project against it and hands back every request the "model" was sent.

The binary is the npm package ``PACKAGE`` at ``PIN``. ``.ci/run`` installs it into
``.ci/copilot`` (git-ignored) and exports ``MEMSITE_COPILOT`` (its path) and
``MEMSITE_REQUIRE_COPILOT=1``; without the variable the tests look in ``.ci/copilot`` and skip
when it is not there, with ``MEMSITE_REQUIRE_COPILOT=1`` they fail instead. By hand::

    npm install --prefix .ci/copilot @github/copilot@1.0.102 --no-audit --no-fund

Its first run unpacks ~235 MB (the CLI itself) under ``$XDG_CACHE_HOME/copilot/pkg``: the runs
point ``XDG_CACHE_HOME`` at ``.ci/copilot/cache`` of this checkout (git-ignored with the rest of
``.ci/copilot``), so it is unpacked once per checkout and CI reuses it, and never under the
machine's own ``~/.cache``. Everything else a run writes (``COPILOT_HOME``: config, session
state, logs) is in a temp folder beside the project.

What may move between versions is kept in this file: the environment that keeps it offline
(``COPILOT_OFFLINE=true``, a BYOK provider, ``COPILOT_ALLOW_ALL=true``, which also trusts the
folder so its ``.github/hooks`` load) and how its ``--output-format json`` lines are read.
Copilot's own tools are ``edit`` (``path``, ``old_str``, ``new_str``), ``create`` (``path``,
``file_text``) and ``bash`` (``command``, ``description``); a path must be absolute.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.claude_code import REPO, Reply, Run, require_agent, run_against

PACKAGE = "@github/copilot"
PIN = "1.0.102"
BIN = "copilot"
LOCAL = REPO / ".ci" / "copilot" / "node_modules" / ".bin" / BIN
CACHE = REPO / ".ci" / "copilot" / "cache"
MODEL = "claude-sonnet-4"


def require_copilot() -> Path:
    """The binary; without it the calling module is skipped, or fails when CI requires it
    (``MEMSITE_REQUIRE_COPILOT=1``, set by ``.ci/run``)."""
    return require_agent("COPILOT", LOCAL, "Copilot CLI")


def copilot_env(
    home: Path, base_url: str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a run: offline against the stand-in, state in ``home``, and no
    variable of the caller's own Copilot, GitHub token or memsite leaking in."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("COPILOT_", "GH_", "GITHUB_", "MEMSITE_", "OTEL_", "XDG_"))
    }
    venv_bin = str(Path(sys.executable).parent)
    env.update(
        PATH=os.pathsep.join([venv_bin, env.get("PATH", os.defpath)]),
        HOME=str(home),
        XDG_CACHE_HOME=str(CACHE),
        XDG_CONFIG_HOME=str(home / ".config"),
        COPILOT_HOME=str(home / ".copilot"),
        COPILOT_PROVIDER_BASE_URL=base_url,
        COPILOT_PROVIDER_TYPE="anthropic",
        COPILOT_PROVIDER_API_KEY="sk-ant-stand-in",
        COPILOT_MODEL=MODEL,
        COPILOT_OFFLINE="true",
        COPILOT_AUTO_UPDATE="false",
        COPILOT_ALLOW_ALL="true",  # exactly "true": tools run, and the folder is trusted
        MEMSITE_WARM_IDLE="30",
    )
    env.update(extra or {})
    return env


def run_copilot(
    project: Path,
    prompt: str,
    replies: list[Reply],
    *,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    timeout: float = 180,
) -> Run:
    """Run ``copilot -p prompt --output-format json`` in ``project`` against a stand-in
    answering ``replies`` (``tool_use("edit", path=..., old_str=..., new_str=...)``, texts).
    ``run.output`` is the list of JSON lines it printed, ``run.session_id`` its session."""
    binary = require_copilot()
    home = home or project.parent / f"{project.name}.home"
    home.mkdir(parents=True, exist_ok=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    command = [str(binary), "-p", prompt, "--output-format", "json"]
    run, done = run_against(
        command, project, replies, home, lambda url: copilot_env(home, url, env), timeout
    )
    lines = []
    for line in done.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            continue
    run.output = lines
    ends = [line for line in lines if isinstance(line, dict) and line.get("type") == "result"]
    run.session_id = ends[-1].get("sessionId") if ends else None
    return run


def hook_outputs(run: Run, hook_type: str) -> list[dict]:
    """What each of the run's hooks of ``hook_type`` (Copilot's camelCase name, as its session
    log spells it: ``sessionStart``) printed, as Copilot read it: the ``hook.end`` records of
    its session log (``COPILOT_HOME/session-state/<session>/events.jsonl``)."""
    log = run.home / ".copilot" / "session-state" / str(run.session_id) / "events.jsonl"
    found = []
    for line in log.read_text("utf-8").splitlines():
        record = json.loads(line)
        data = record.get("data") or {}
        if record.get("type") == "hook.end" and data.get("hookType") == hook_type:
            found.append(data.get("output") or {})
    return found
