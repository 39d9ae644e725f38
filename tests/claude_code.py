"""What the tests of the real Claude Code binary share (issue 23): the pinned ``claude``, a
stand-in for the Messages API on 127.0.0.1 that answers from a script, and ``run_claude``,
which runs ``claude -p`` in a project against it and hands back every request the "model"
was sent.

The binary is the npm package ``@anthropic-ai/claude-code`` at ``PIN``. ``.ci/run`` installs
it into ``.ci/node`` (git-ignored) and exports ``MEMSITE_CLAUDE`` (its path) and
``MEMSITE_REQUIRE_CLAUDE=1``; without the variable the tests look in ``.ci/node`` and skip
when it is not there, with ``MEMSITE_REQUIRE_CLAUDE=1`` they fail instead. To install it by
hand::

    npm install --prefix .ci/node @anthropic-ai/claude-code@2.1.328 --no-audit --no-fund

A new Claude Code version is one pin away: change ``PIN`` below (``.ci/run`` reads it from
here and reinstalls when ``claude --version`` differs; a test checks the two agree) and run
``tests/test_claude_code.py``. What may move between versions is kept in this file only: the
stand-in's answers (2.1.328 calls nothing but ``POST /v1/messages?beta=true``, streamed, and
six SSE events make a reply), the environment that keeps it offline, where ``texts`` looks
for what was sent (2.1.328 sends hook context as a ``"role": "system"`` message in
``messages``, prefixed "SessionStart hook additional context: ") and the
``<persisted-output>`` marker of a hook context over 10,000 characters.

A test gives ``run_claude`` a script of replies, consumed one per model call in order::

    project = sample_project(tmp_path / "project", files={"a.py": "x = 1"})
    run = run_claude(project, "Fix it", [tool_use("Edit", file_path=str(project / "a.py"),
                     old_string="x = 1", new_string="x = 2"), "Fixed."])
    assert "# Persona" in run.all_texts(run.messages[0])   # the first model call
    assert run.tool_results(run.messages[1])                # the call after the edit

A text is an ``end_turn`` reply; a ``tool_use`` makes the binary run that tool (it must
succeed on its own: an ``old_string`` found twice is a tool error) and call the model again
with its result; past the end of the script every call gets "done". To see what hooks are
sent, add ``capture_hooks(log, [...events])`` to ``write_settings`` and read ``captured(log)``.
To compact: ``run_claude(project, "/compact", ["<summary>...</summary>"], resume=run.session_id)``
(one model call; a reply without ``<summary>`` tags makes Claude Code ask a second time).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

PIN = "2.1.328"
REPO = Path(__file__).resolve().parent.parent
LOCAL = REPO / ".ci" / "node" / "node_modules" / ".bin" / "claude"
SAMPLE = REPO / "memory"
PERSISTED = "<persisted-output>"


def agent_binary(cli: str, local: Path) -> Path | None:
    """The pinned binary of an agent CLI: ``$MEMSITE_<CLI>``, else ``local`` (where
    ``.ci/run`` installs it)."""
    named = os.environ.get(f"MEMSITE_{cli}")
    path = Path(named) if named else local
    return path if path.is_file() and os.access(path, os.X_OK) else None


def require_agent(cli: str, local: Path, title: str) -> Path:
    """The binary; without it the calling test (or module) is skipped, or fails when CI
    requires it (``MEMSITE_REQUIRE_<CLI>=1``, set by ``.ci/run``)."""
    path = agent_binary(cli, local)
    if path is not None:
        return path
    where = os.environ.get(f"MEMSITE_{cli}") or str(local)
    if os.environ.get(f"MEMSITE_REQUIRE_{cli}"):
        pytest.fail(f"MEMSITE_REQUIRE_{cli} is set but {where} is missing", pytrace=False)
    pytest.skip(f"{title} is not installed at {where} (see .ci/run)", allow_module_level=True)


def claude_binary() -> Path | None:
    """The pinned ``claude``: ``$MEMSITE_CLAUDE``, else the one ``.ci/run`` installs."""
    return agent_binary("CLAUDE", LOCAL)


def require_claude() -> Path:
    """The binary; without it the calling test (or module) is skipped, or fails when CI
    requires it (``MEMSITE_REQUIRE_CLAUDE=1``, set by ``.ci/run``)."""
    return require_agent("CLAUDE", LOCAL, "Claude Code")


# --- the script ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolUse:
    """A scripted reply that calls a tool: ``name`` with ``input``."""

    name: str
    input: dict[str, Any]


def tool_use(name: str, **tool_input: Any) -> ToolUse:
    return ToolUse(name, tool_input)


Reply = str | ToolUse
DONE = "done"


def _sse(reply: Reply, model: str, number: int) -> bytes:
    """``reply`` as the six SSE events of one streamed message."""
    if isinstance(reply, ToolUse):
        block = {"type": "tool_use", "id": f"toolu_{number:04d}", "name": reply.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.input)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply}
        stop = "end_turn"
    message = {
        "id": f"msg_{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    events = [
        ("message_start", {"type": "message_start", "message": message}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


def _message(reply: Reply, model: str, number: int) -> dict[str, Any]:
    """``reply`` as one whole (not streamed) message."""
    if isinstance(reply, ToolUse):
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_{number:04d}",
                "name": reply.name,
                "input": reply.input,
            }
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": reply}]
        stop = "end_turn"
    return {
        "id": f"msg_{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


# --- the stand-in -------------------------------------------------------------------------


@dataclass
class Request:
    """One HTTP request the stand-in received; ``body`` is its parsed JSON (None if none)."""

    method: str
    path: str
    body: Any


class StandIn:
    """A Messages-API stand-in on 127.0.0.1: records every request, answers each model call
    (POST /v1/messages, with or without ``?beta=true``) with the next reply of the script."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._served = 0
        self.url = ""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the model calls, in order."""
        return [r.body for r in self.requests if _route(r.path) == "/v1/messages"]

    def _next(self) -> tuple[Reply, int]:
        with self._lock:
            self._served += 1
            reply = self.replies.pop(0) if self.replies else DONE
            return reply, self._served

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _record(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with stand_in._lock:
                    stand_in.requests.append(Request(self.command, self.path, body))
                return body

            def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def do_HEAD(self) -> None:
                self._record()
                self._send(200, b"")

            def do_GET(self) -> None:
                self._record()
                self._send(200, b"{}")

            def do_POST(self) -> None:
                body = self._record()
                route = _route(self.path)
                if route == "/v1/messages/count_tokens":
                    self._send(200, json.dumps({"input_tokens": 100}).encode())
                    return
                if route != "/v1/messages" or not isinstance(body, dict):
                    self._send(200, b"{}")
                    return
                reply, number = stand_in._next()
                model = str(body.get("model") or "claude-stand-in")
                if body.get("stream"):
                    self._send(200, _sse(reply, model, number), "text/event-stream")
                else:
                    self._send(200, json.dumps(_message(reply, model, number)).encode())

        return Handler

    @contextmanager
    def serve(self) -> Iterator[StandIn]:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            yield self
        finally:
            server.shutdown()
            thread.join()
            server.server_close()


def _route(path: str) -> str:
    return path.split("?", 1)[0]


# --- what the model was sent --------------------------------------------------------------


def _content_texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
        return
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            yield block.get("text", "")
        elif block.get("type") == "tool_result":
            yield from _content_texts(block.get("content"))


def texts(request: Mapping[str, Any]) -> list[str]:
    """Every text the model was sent in one model call: the system prompt's blocks, then each
    message's text blocks and tool results (system-reminders are text blocks too)."""
    found = list(_content_texts(request.get("system")))
    for message in request.get("messages") or []:
        found.extend(_content_texts(message.get("content")))
    return found


def tool_results(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of one model call, in order (``tool_use_id``, ``content``,
    ``is_error``)."""
    return [
        block
        for message in request.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def persisted_preview(request: Mapping[str, Any]) -> list[str]:
    """The texts of ``request`` that are a ``<persisted-output>`` preview: what Claude Code
    sends instead of a hook's context (or a tool result) too large to send inline."""
    return [text for text in texts(request) if PERSISTED in text]


# --- a project ----------------------------------------------------------------------------


def memsite_command(*args: str) -> str:
    """The shell command that runs this checkout's memsite (the venv's interpreter)."""
    return " ".join([shlex.quote(sys.executable), "-m", "memsite", *args])


def memsite_hooks(command: str | None = None) -> dict[str, Any]:
    """The hooks block of docs/agents.md, each command being ``command`` (default: this
    venv's ``memsite hook``)."""
    hook = command or memsite_command("hook")

    def entry(cmd: str, matcher: str | None = None) -> dict[str, Any]:
        found: dict[str, Any] = {"hooks": [{"type": "command", "command": cmd, "timeout": 10}]}
        return {"matcher": matcher, **found} if matcher else found

    return {
        "SessionStart": [entry(f"{hook} --prime-budget 20000", "startup|resume|clear|compact")],
        "UserPromptSubmit": [entry(hook)],
        "PreToolUse": [entry(hook, "Edit|Write|MultiEdit|NotebookEdit")],
        "PreCompact": [entry(hook, "auto|manual")],
        "PostCompact": [entry(hook, "auto|manual")],
        "SessionEnd": [entry(hook)],
    }


def write_settings(
    project: Path,
    *,
    memsite: bool = True,
    extra_hooks: Mapping[str, list[dict[str, Any]]] | None = None,
) -> Path:
    """Write ``project/.claude/settings.json``: the memsite hooks (unless ``memsite`` is false,
    e.g. when a test let ``memsite init --claude`` write them) plus ``extra_hooks``, whose
    entries are appended to the same events. Merges into a settings file already there."""
    path = project / ".claude" / "settings.json"
    settings: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    hooks: dict[str, list[Any]] = settings.setdefault("hooks", {})
    if memsite:
        for event, entries in memsite_hooks().items():
            hooks.setdefault(event, []).extend(entries)
    for event, entries in (extra_hooks or {}).items():
        hooks.setdefault(event, []).extend(entries)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


def capture_hooks(log: Path, events: list[str], matcher: str | None = None) -> dict[str, Any]:
    """Extra hooks that append each event's JSON (one line) to ``log``: for ``write_settings``."""
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(_CAPTURE)} {shlex.quote(str(log))}"
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": 10}]}
    if matcher:
        entry = {"matcher": matcher, **entry}
    return {event: [entry] for event in events}


_CAPTURE = (
    "import json, sys\n"
    "event = json.load(sys.stdin)\n"
    "with open(sys.argv[1], 'a') as f: f.write(json.dumps(event) + '\\n')\n"
)


def captured(log: Path) -> list[dict[str, Any]]:
    """The events ``capture_hooks`` appended to ``log``."""
    if not log.is_file():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def memsite_in(
    project: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``memsite ARGS`` run by this checkout in ``project``, on its tree ``memory/``
    (``memsite_in(project, "init", "--codex")``), in ``env`` (else this process's)."""
    return subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(project / "memory"), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def memsite_context(project: Path, event_name: str, *args: str, **fields: Any) -> str:
    """The ``additionalContext`` this checkout's ``memsite hook ARGS`` answers to one event
    run in ``project`` ("" when it adds nothing): what a hook should have handed the model.
    Run it on a twin copy of the project when the event may write (SessionEnd does)."""
    event = {
        "session_id": "claude-code-harness",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "hook_event_name": event_name,
        **fields,
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_WARM"] = "off"  # the reference: what the hook recalls in its own process
    done = subprocess.run(
        [sys.executable, "-m", "memsite", "hook", *args],
        cwd=project,
        env=env,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    if not done.stdout.strip():
        return ""
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def git_init(project: Path) -> None:
    """Make ``project`` a git repository with one commit (Claude Code reads git state)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True, env=env)
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "start"], cwd=project, check=True, env=env
    )


# --- a run --------------------------------------------------------------------------------


@dataclass
class Run:
    """One ``claude -p`` run: what it printed and what the stand-in received."""

    args: list[str] = field(repr=False)
    returncode: int
    stdout: str = field(repr=False)
    stderr: str = field(repr=False)
    seconds: float
    requests: list[Request] = field(repr=False)
    home: Path = field(repr=False)
    output: Any = field(default=None, repr=False)
    session_id: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list, repr=False)

    texts = staticmethod(texts)
    tool_results = staticmethod(tool_results)
    persisted_preview = staticmethod(persisted_preview)

    def all_texts(self, request: Mapping[str, Any]) -> str:
        """``texts(request)`` joined into one string, for ``in`` checks."""
        return "\n".join(texts(request))


def clean_env(home: Path, base_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a run: offline, a temp HOME, no telemetry or updates, and no
    variable of the caller's own Claude Code (or a real key) leaking in."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "CLAUDE", "MEMSITE_", "OTEL_"))
    }
    venv_bin = str(Path(sys.executable).parent)  # a bare `memsite` is this checkout's
    env.update(
        PATH=os.pathsep.join([venv_bin, env.get("PATH", os.defpath)]),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="sk-ant-stand-in",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_BUG_COMMAND="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        # a warm process a run's hooks start leaves soon after the test is done with it
        MEMSITE_WARM_IDLE="30",
    )
    env.update(extra or {})
    return env


def run_against(
    command: list[str],
    project: Path,
    replies: list[Reply],
    home: Path,
    environment: Callable[[str], dict[str, str]],
    timeout: float,
) -> tuple[Run, subprocess.CompletedProcess[str]]:
    """Run ``command`` in ``project`` against a stand-in answering ``replies``, in the
    environment ``environment(stand_in_url)`` gives: the run (its output not read yet) and
    the finished process. Every agent CLI's tests run their binary so."""
    stand_in = StandIn(replies)
    with stand_in.serve():
        started = time.monotonic()
        done = subprocess.run(
            command,
            cwd=project,
            env=environment(stand_in.url),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        seconds = time.monotonic() - started
    run = Run(
        args=command,
        returncode=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        seconds=seconds,
        requests=list(stand_in.requests),
        home=home,
        messages=stand_in.messages,
    )
    return run, done


def run_claude(
    project: Path,
    prompt: str,
    replies: list[Reply],
    *,
    resume: str | None = None,
    allowed_tools: list[str] | tuple[str, ...] = (),
    args: list[str] | tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    timeout: float = 120,
) -> Run:
    """Run ``claude -p prompt`` in ``project`` against a stand-in answering ``replies``.

    ``resume`` resumes that session id (sessions live under HOME, which defaults to the
    folder ``<project>.home`` beside the project, so runs of one project share it);
    ``allowed_tools`` become ``--allowedTools`` (edits are allowed by ``acceptEdits``, a
    command needs ``["Bash"]``); ``args`` are passed on; ``env`` is added to the clean
    environment. A run that outlives ``timeout`` seconds raises ``TimeoutExpired``."""
    binary = require_claude()
    if home is None:
        home = project.parent / f"{project.name}.home"
    home.mkdir(parents=True, exist_ok=True)
    command = [
        str(binary),
        "-p",
        prompt,
        "--permission-mode",
        "acceptEdits",
        "--output-format",
        "json",
    ]
    if resume:
        command += ["--resume", resume]
    if allowed_tools:
        command += ["--allowedTools", ",".join(allowed_tools)]
    command += list(args)
    run, done = run_against(
        command, project, replies, home, lambda url: clean_env(home, url, env), timeout
    )
    try:
        run.output = json.loads(done.stdout)
    except ValueError:
        run.output = None
    if isinstance(run.output, dict):
        run.session_id = run.output.get("session_id")
    return run


def sample_project(
    project: Path,
    *,
    settings: bool = True,
    files: Mapping[str, str] | None = None,
    live: bool = True,
) -> Path:
    """A project for a run: the bundled sample memory in ``project/memory``, ``files``
    (relative path: text), the memsite hooks in ``.claude/settings.json`` (unless
    ``settings`` is false), all committed in a new git repository; unless ``live``, the
    sample's live session is then removed (``hot/context.json``): no session started by
    hand, so the first hook starts one. Returns ``project``."""
    shutil.copytree(SAMPLE, project / "memory", ignore=shutil.ignore_patterns(".lock"))
    for name, text in (files or {}).items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    if settings:
        write_settings(project)
    git_init(project)
    if not live:
        (project / "memory" / "hot" / "context.json").unlink()
    return project


def warm_log(memory: Path) -> str:
    """Every day log of the memory tree ``memory``, oldest first, as one text."""
    return "".join(p.read_text("utf-8") for p in sorted((memory / "warm").glob("*.md")))
