"""What the tests of the real Gemini CLI binary share (issue 37): the pinned ``gemini``, a
stand-in for the Gemini API on 127.0.0.1 that answers from a script, and ``run_gemini``,
which runs ``gemini -p`` in a project against it and hands back every request the "model"
was sent.

The binary is the npm package ``PACKAGE`` at ``PIN``. ``.ci/run`` installs it into
``.ci/gemini`` (git-ignored) and exports ``MEMSITE_GEMINI`` (its path) and
``MEMSITE_REQUIRE_GEMINI=1``; without the variable the tests look in ``.ci/gemini`` and skip
when it is not there, with ``MEMSITE_REQUIRE_GEMINI=1`` they fail instead. By hand::

    npm install --prefix .ci/gemini @google/gemini-cli@0.61.0 --no-audit --no-fund

What may move between versions is kept here: 0.61.0 calls ``POST
/v1beta/models/MODEL:streamGenerateContent?alt=sse`` for each turn of the agent (one SSE
event makes a reply), ``:countTokens`` now and then, and nothing else when telemetry, updates
and the model router are off; the environment that keeps it offline and in a temp HOME
(``GOOGLE_GEMINI_BASE_URL``, ``GEMINI_API_KEY``, ``GEMINI_CLI_TRUST_WORKSPACE``); where
``texts`` looks for what was sent (``contents[].parts[].text`` and each
``functionResponse``'s output).

A script is a list of replies, one per model call, as for Claude Code (``tool_use`` from
tests/claude_code.py makes a ``functionCall``)::

    run = run_gemini(project, "Fix it", [tool_use("replace", file_path=..., old_string=...,
                     new_string=..., instruction="fix"), "Fixed."])
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests import claude_code
from tests.claude_code import Reply, ToolUse

PACKAGE = "@google/gemini-cli"
PIN = "0.61.0"
BIN = "gemini"
REPO = Path(__file__).resolve().parent.parent
LOCAL = REPO / ".ci" / "gemini" / "node_modules" / ".bin" / BIN
MODEL = "gemini-2.5-flash"
# what a utility call (``:generateContent``: a compression's summary and its check) is told
SNAPSHOT = "<state_snapshot>We switched the hasher to argon2id.</state_snapshot>"


def require_gemini() -> Path:
    """The binary; without it the calling module is skipped, or fails when CI requires it
    (``MEMSITE_REQUIRE_GEMINI=1``, set by ``.ci/run``)."""
    return claude_code.require_agent("GEMINI", LOCAL, "Gemini CLI")


# --- the stand-in -------------------------------------------------------------------------


def _chunk(reply: Reply, prompt_tokens: int = 100) -> dict[str, Any]:
    """``reply`` as one ``GenerateContentResponse`` saying the prompt was ``prompt_tokens``
    long (what Gemini CLI weighs against its window to decide on a compression)."""
    if isinstance(reply, ToolUse):
        part: dict[str, Any] = {"functionCall": {"name": reply.name, "args": reply.input}}
    else:
        part = {"text": reply}
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": 5,
            "totalTokenCount": prompt_tokens + 5,
        },
        "modelVersion": MODEL,
    }


class StandIn(claude_code.StandIn):
    """A Gemini-API stand-in on 127.0.0.1 (Claude Code's, answering another API): records
    every request, answers each ``:streamGenerateContent`` call with the next reply of the
    script (one SSE event), a utility call (``:generateContent``) with ``SNAPSHOT``,
    ``:countTokens`` with a small count and anything else with an empty object."""

    def __init__(self, replies: list[Reply], tokens: list[int] | None = None) -> None:
        super().__init__(replies)
        self.tokens = list(tokens or [])

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The bodies of the model calls (``streamGenerateContent``), in order."""
        return [r.body for r in self.requests if _route(r.path).endswith(":streamGenerateContent")]

    def _reply(self) -> dict[str, Any]:
        reply, _ = self._next()
        with self._lock:
            return _chunk(reply, self.tokens.pop(0) if self.tokens else 100)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(super()._handler()):  # type: ignore[misc]
            def do_POST(self) -> None:
                self._record()
                route = _route(self.path)
                if route.endswith(":streamGenerateContent"):
                    data = f"data: {json.dumps(stand_in._reply())}\r\n\r\n".encode()
                    self._send(200, data, "text/event-stream")
                elif route.endswith(":generateContent"):  # a utility call: a compression's
                    self._send(200, json.dumps(_chunk(SNAPSHOT)).encode())
                elif route.endswith(":countTokens"):
                    self._send(200, json.dumps({"totalTokens": 100}).encode())
                else:
                    self._send(200, b"{}")

        return Handler


def _route(path: str) -> str:
    return path.split("?", 1)[0]


# --- what the model was sent --------------------------------------------------------------


def texts(request: Mapping[str, Any], system: bool = True) -> list[str]:
    """Every text the model was sent in one call: the system instruction's parts (unless
    ``system`` is false), then each content's text parts and function responses' outputs."""
    found: list[str] = []
    instruction = request.get("systemInstruction") if system else None
    for part in instruction.get("parts", []) if isinstance(instruction, dict) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            found.append(part["text"])
    for content in request.get("contents") or []:
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                found.append(part["text"])
            response = part.get("functionResponse")
            if isinstance(response, dict):
                found.append(json.dumps(response.get("response"), ensure_ascii=False))
    return found


def function_responses(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``functionResponse`` parts of one call, in order (``name``, ``response``)."""
    return [
        part["functionResponse"]
        for content in request.get("contents") or []
        for part in content.get("parts") or []
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
    ]


def output_of(response: Mapping[str, Any]) -> str:
    """The text a function response hands the model (``response.output``)."""
    inner = response.get("response")
    value = inner.get("output") if isinstance(inner, dict) else None
    return value if isinstance(value, str) else json.dumps(inner, ensure_ascii=False)


def unescaped(text: str) -> str:
    """``text`` as memsite wrote it: Gemini CLI escapes ``<`` and ``>`` of hook context."""
    return text.replace("&lt;", "<").replace("&gt;", ">")


# --- a project ----------------------------------------------------------------------------


def capture_hooks(log: Path, events: list[str]) -> dict[str, Any]:
    """Hooks for ``.gemini/settings.json`` that append each event's JSON (one line) to
    ``log``: how the fixtures under tests/fixtures/harnesses/gemini/ were recorded."""
    script = (
        "import json,sys\nwith open(sys.argv[1],'a') as f: f.write(sys.stdin.read().strip()+'\\n')"
    )
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {shlex.quote(str(log))}"
    entry = {"hooks": [{"type": "command", "command": command, "timeout": 10_000}]}
    return {event: [entry] for event in events}


def add_hooks(project: Path, hooks: Mapping[str, list[dict[str, Any]]]) -> Path:
    """Append ``hooks`` to ``project/.gemini/settings.json`` (made when missing)."""
    path = project / ".gemini" / "settings.json"
    settings: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    for event, groups in hooks.items():
        settings.setdefault("hooks", {}).setdefault(event, []).extend(groups)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


def captured(log: Path) -> list[dict[str, Any]]:
    """The events ``capture_hooks`` appended to ``log``."""
    if not log.is_file():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


# --- a run --------------------------------------------------------------------------------


@dataclass
class Run(claude_code.Run):
    """One ``gemini -p`` run: what it printed and what the stand-in received (``calls``:
    the model calls' bodies; ``messages`` stays empty, it is Claude Code's)."""

    calls: list[dict[str, Any]] = field(default_factory=list, repr=False)

    texts = staticmethod(texts)  # type: ignore[assignment]
    function_responses = staticmethod(function_responses)

    def all_texts(self, request: Mapping[str, Any], system: bool = True) -> str:
        """``texts(request, system)`` joined into one string, for ``in`` checks."""
        return "\n".join(texts(request, system))


def clean_env(home: Path, base_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a run: offline, a temp HOME, no telemetry, and no variable of the
    caller's own Gemini CLI (or a real key) leaking in."""
    env = {  # Claude Code's, less its own variables and any of the caller's Gemini CLI
        key: value
        for key, value in claude_code.clean_env(home, base_url).items()
        if not key.startswith(("ANTHROPIC_", "GEMINI_", "GOOGLE_", "CLOUDSDK_"))
    }
    gemini = {"GEMINI_CLI_HOME": str(home), "GOOGLE_GEMINI_BASE_URL": base_url}
    gemini |= {"GEMINI_API_KEY": "stand-in-key", "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    gemini |= {"GEMINI_TELEMETRY_ENABLED": "false", "NO_BROWSER": "1"}
    return env | gemini | dict(extra or {})


USER_SETTINGS = {
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "telemetry": {"enabled": False},
}


def run_gemini(
    project: Path,
    prompt: str,
    replies: list[Reply],
    *,
    args: list[str] | tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    tokens: list[int] | None = None,
    timeout: float = 180,
) -> Run:
    """Run ``gemini -p prompt -o json --yolo`` in ``project`` against a stand-in answering
    ``replies``; HOME defaults to ``<project>.home`` beside the project; ``tokens`` are the
    prompt sizes the stand-in reports, one per call (100 past the list's end)."""
    binary = require_gemini()
    if home is None:
        home = project.parent / f"{project.name}.home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    user = home / ".gemini" / "settings.json"
    if not user.is_file():
        user.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    command = [str(binary), "-p", prompt, "-o", "json", "--yolo", "-m", MODEL, *args]
    stand_in = StandIn(replies, tokens)
    with stand_in.serve():
        started = time.monotonic()
        kept = dict(cwd=project, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        done = subprocess.run(
            command, env=clean_env(home, stand_in.url, env), timeout=timeout, **kept
        )
    run = Run(command, done.returncode, done.stdout, done.stderr, time.monotonic() - started,
              list(stand_in.requests), home, calls=stand_in.calls)  # fmt: skip
    try:
        run.output = json.loads(done.stdout)
        run.session_id = run.output.get("session_id")
    except (ValueError, AttributeError):
        pass
    return run
