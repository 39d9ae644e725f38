"""What the tests of the real Qwen Code binary share (issue 37): the pinned ``qwen`` and
``run_qwen``, which runs ``qwen -p`` in a project against the Messages-API stand-in of
tests/claude_code.py (Qwen Code's ``--auth-type anthropic`` speaks it) and hands back every
request the "model" was sent.

The binary is the npm package ``PACKAGE`` at ``PIN``. ``.ci/run`` installs it into
``.ci/qwen`` (git-ignored) and exports ``MEMSITE_QWEN`` (its path) and
``MEMSITE_REQUIRE_QWEN=1``; without the variable the tests look in ``.ci/qwen`` and skip when
it is not there, with ``MEMSITE_REQUIRE_QWEN=1`` they fail instead. By hand::

    npm install --prefix .ci/qwen @qwen-code/qwen-code@0.24.4 --no-audit --no-fund

What may move between versions is kept here: 0.24.4 calls ``POST /v1/messages`` (streamed)
once per model request, and nothing else once its managed auto-memory and dreaming are off
(on, they call the model in the background: ``USER_SETTINGS``); the environment that keeps it
offline and in a temp HOME (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``,
``ANTHROPIC_MODEL``); its ``-o json`` output, an array whose first element holds
``session_id``. Its tools: ``read_file`` (``file_path``; ``edit`` refuses a file not read in
the session), ``edit`` (``file_path``, ``old_string``, ``new_string``), ``write_file``,
``run_shell_command`` (``command``, ``description``, ``is_background``).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from tests.claude_code import REPO, Reply, Run, StandIn, clean_env, memsite_in, require_agent

PACKAGE = "@qwen-code/qwen-code"
PIN = "0.24.4"
BIN = "qwen"

LOCAL = REPO / ".ci" / "qwen" / "node_modules" / ".bin" / BIN
MODEL = "claude-stand-in"
# the user's settings in the run's HOME: no model calls of its own in the background
USER_SETTINGS = {
    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
    "telemetry": {"enabled": False},
}


def require_qwen() -> Path:
    """The binary (``$MEMSITE_QWEN``, else the one ``.ci/run`` installs); without it the
    calling module is skipped, or fails when CI requires it (``MEMSITE_REQUIRE_QWEN=1``)."""
    return require_agent("QWEN", LOCAL, "Qwen Code")


def run_qwen(
    project: Path,
    prompt: str,
    replies: list[Reply],
    *,
    args: list[str] | tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    timeout: float = 180,
) -> Run:
    """Run ``qwen -p prompt`` in ``project`` (every tool allowed) against a stand-in
    answering ``replies``; ``args`` are passed on (``--session-id ID``); HOME defaults to
    ``<project>.home`` beside the project."""
    binary = require_qwen()
    if home is None:
        home = project.parent / f"{project.name}.home"
    (home / ".qwen").mkdir(parents=True, exist_ok=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    command = [str(binary), "-p", prompt, "--auth-type", "anthropic", "-o", "json", "--yolo"]
    command += list(args)
    stand_in = StandIn(replies)
    with stand_in.serve():
        extra = {
            "ANTHROPIC_MODEL": MODEL,
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
            **(env or {}),
        }
        environment = {
            key: value
            for key, value in clean_env(home, stand_in.url, extra).items()
            if not key.startswith(("QWEN_", "OPENAI_", "DASHSCOPE_")) or key in extra
        }
        started = time.monotonic()
        done = subprocess.run(
            command, cwd=project, env=environment, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        seconds = time.monotonic() - started
    said = (done.returncode, done.stdout, done.stderr, seconds, list(stand_in.requests), home)
    run = Run(command, *said, messages=stand_in.messages)
    try:
        run.output = json.loads(done.stdout)
    except ValueError:
        run.output = None
    # -o json: an array of messages, the first (the run's init) holding session_id
    first = run.output[0] if isinstance(run.output, list) and run.output else None
    run.session_id = first.get("session_id") if isinstance(first, dict) else None
    return run


def escaped(text: str) -> str:
    """``text`` as Qwen Code hands hook context to the model (``harnesses.qwen.ESCAPED``)."""
    from memsite.agents.harnesses.qwen import ESCAPED

    for plain, entity in ESCAPED:
        text = text.replace(plain, entity)
    return text


def memsite_init_qwen(project: Path) -> subprocess.CompletedProcess[str]:
    """``memsite init --qwen`` run by this checkout in ``project`` (its tree: ``memory/``)."""
    return memsite_in(project, "init", "--qwen", timeout=60)
