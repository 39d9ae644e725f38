"""What the tests of the real Codex binary share (issue 37): the pinned ``codex``, a stand-in
for the OpenAI Responses API on 127.0.0.1 that answers from a script, and ``run_codex``, which
runs ``codex exec`` in a project against it and hands back every request the "model" was sent.

The binary is the npm package below at ``PIN``. ``.ci/run`` installs it into ``.ci/codex``
(git-ignored) and exports ``MEMSITE_CODEX`` (its path) and ``MEMSITE_REQUIRE_CODEX=1``;
without the variable the tests look in ``.ci/codex`` and skip when it is not there. What may
move between versions is kept here: the stand-in's answers (0.169.0 calls ``POST
/v1/responses``, streamed; a reply is ``response.created``, one ``response.output_item.done``
and ``response.completed``), the model it must be told (one Codex knows, ``gpt-5.5``, or it
offers no ``apply_patch``) and the environment that keeps it offline: ``CODEX_HOME`` with a
``config.toml`` naming the stand-in as the provider and the project as trusted.

A script is a list of replies, one per model call in order: a text ends the turn; ``patch``
makes Codex run ``apply_patch`` (its freeform tool) with that patch; ``command`` runs a shell
command through ``exec_command``; past the end every call gets "done"::

    run = run_codex(project, "Fix it", [patch(PATCH), command("exit 3"), "Fixed."])
    assert "# Persona" in run.all_texts(run.messages[0])
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests import claude_code
from tests.claude_code import StandIn, _route, require_agent

PACKAGE = "@openai/codex"
PIN = "0.169.0"
BIN = "codex"
REPO = Path(__file__).resolve().parent.parent
LOCAL = REPO / ".ci" / "codex" / "node_modules" / ".bin" / BIN
MODEL = "gpt-5.5"
SPILLED = "Full hook output saved to"  # what Codex says of hook context over its cap


def require_codex() -> Path:
    """The binary (``$MEMSITE_CODEX``, else the one ``.ci/run`` installs); without it the
    calling module is skipped, or fails when CI requires it (``MEMSITE_REQUIRE_CODEX=1``)."""
    return require_agent("CODEX", LOCAL, "Codex")


# --- the script ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """A scripted reply that calls a tool: a function's JSON ``arguments``, or the freeform
    ``input`` of a custom tool (``apply_patch``)."""

    name: str
    arguments: dict[str, Any] | None = None
    input: str | None = None


def patch(text: str) -> Call:
    return Call("apply_patch", input=text)


def command(cmd: str) -> Call:
    return Call("exec_command", arguments={"cmd": cmd})


Reply = str | Call


def _item(reply: Reply, number: int) -> dict[str, Any]:
    """``reply`` as one output item of the Responses API."""
    if isinstance(reply, str):
        text = {"type": "output_text", "text": reply, "annotations": []}
        return {"type": "message", "role": "assistant", "id": f"msg_{number}", "content": [text]}
    call = {"id": f"item_{number}", "call_id": f"call_{number}", "name": reply.name}
    if reply.input is not None:
        return {"type": "custom_tool_call", "input": reply.input, "status": "completed", **call}
    arguments = json.dumps(reply.arguments or {})
    return {"type": "function_call", "arguments": arguments, "status": "completed", **call}


def _sse(reply: Reply, number: int, tokens: int) -> bytes:
    """``reply`` as the SSE events of one streamed response that says it used ``tokens``."""
    item = _item(reply, number)
    usage = {
        "input_tokens": tokens - 5,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens,
    }
    events = [
        {"type": "response.created", "response": {"id": f"resp_{number}"}},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": f"resp_{number}", "usage": usage}},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


# --- the stand-in -------------------------------------------------------------------------


class ResponsesStandIn(StandIn):
    """A Responses-API stand-in on 127.0.0.1 (the Messages one's server, its requests
    recorded the same way): each ``POST /v1/responses`` gets the next reply of the script,
    each saying it used ``tokens`` (over ``model_auto_compact_token_limit``, Codex compacts)."""

    def __init__(self, replies: list[Reply], tokens: int = 15) -> None:
        super().__init__(replies)  # type: ignore[arg-type]
        self.tokens = tokens

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the model calls, in order."""
        return [r.body for r in self.requests if _route(r.path) == "/v1/responses"]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self
        recording = super()._handler()

        class Handler(recording):  # type: ignore[valid-type,misc]
            def do_POST(self) -> None:
                body = self._record()
                if _route(self.path) != "/v1/responses" or not isinstance(body, dict):
                    self._send(200, b"{}")
                    return
                reply, number = stand_in._next()
                self._send(200, _sse(reply, number, stand_in.tokens), "text/event-stream")

        return Handler


# --- what the model was sent --------------------------------------------------------------


def texts(request: Mapping[str, Any]) -> list[str]:
    """Every text the model was sent in one call: the instructions, each message's texts and
    each tool call's output, in order."""
    found = [request["instructions"]] if isinstance(request.get("instructions"), str) else []
    for item in request.get("input") or []:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("output"), str):
            found.append(item["output"])
        for part in item.get("content") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                found.append(part["text"])
    return found


def items(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The input items of one model call, in order."""
    return [item for item in request.get("input") or [] if isinstance(item, dict)]


# --- a run --------------------------------------------------------------------------------


class Run(claude_code.Run):
    """One ``codex exec`` run: what it printed and what the stand-in received (its
    ``messages`` are the bodies of the Responses-API calls)."""

    texts = staticmethod(texts)
    items = staticmethod(items)

    def all_texts(self, request: Mapping[str, Any]) -> str:
        return "\n".join(texts(request))

    def logs(self) -> Iterator[Path]:
        """Codex's session logs of the run (``transcript_path``)."""
        yield from sorted((self.home / ".codex" / "sessions").rglob("rollout-*.jsonl"))


def write_config(home: Path, project: Path, base_url: str, settings: str = "") -> Path:
    """``CODEX_HOME`` (``home/.codex``) with the stand-in as the model provider and
    ``project`` trusted, so that Codex loads its ``.codex/hooks.json``; ``settings`` are
    more top-level lines of ``config.toml``."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        settings + f'model = "{MODEL}"\n'
        'model_provider = "stand-in"\n'
        "[model_providers.stand-in]\n"
        'name = "stand-in"\n'
        f'base_url = "{base_url}/v1"\n'
        'wire_api = "responses"\n'
        f"[projects.{json.dumps(str(project.resolve()))}]\n"
        'trust_level = "trusted"\n',
        "utf-8",
    )
    return codex_home


def clean_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a run: a temp HOME and CODEX_HOME, and no variable of the caller's
    own Codex, OpenAI key or memsite leaking in."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CODEX_", "MEMSITE_", "OTEL_"))
    }
    venv_bin = str(Path(sys.executable).parent)
    env.update(
        PATH=os.pathsep.join([venv_bin, env.get("PATH", os.defpath)]),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        CODEX_HOME=str(home / ".codex"),
        MEMSITE_WARM_IDLE="30",  # a warm process the hooks start leaves soon after
    )
    return {**env, **(extra or {})}


def run_codex(
    project: Path, prompt: str, replies: list[Reply], settings: str = "", tokens: int = 15
) -> Run:
    """Run ``codex exec prompt`` in ``project`` against a stand-in answering ``replies``.

    Hooks run without Codex's per-hook review (``--dangerously-bypass-hook-trust``: a
    person trusts them once in ``/hooks``), tools without approvals or sandbox (the project
    is a scratch folder); stdin is empty (``codex exec`` would read more prompt from it).
    ``settings`` and ``tokens``: see ``write_config`` and ``ResponsesStandIn``."""
    binary = require_codex()
    home = project.parent / f"{project.name}.home"
    stand_in = ResponsesStandIn(replies, tokens)
    command_line = [
        str(binary), "exec", "--dangerously-bypass-hook-trust",
        "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", prompt,
    ]  # fmt: skip
    with stand_in.serve():
        write_config(home, project, stand_in.url, settings)
        started = time.monotonic()
        done = subprocess.run(
            command_line,
            cwd=project,
            env=clean_env(home),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )
        seconds = time.monotonic() - started
    said = (done.returncode, done.stdout, done.stderr)
    return Run(
        command_line, *said, seconds, list(stand_in.requests), home, None, None, stand_in.messages
    )
