"""Issue 34.1: shell secrets are never stored by capture. Claude Code's PostToolUse events of
real command lines that carry a secret (an ``export DB_PASSWORD=…``, ``mysql -p…``, ``curl
-u admin:…``, an ``Authorization`` header, an ``.npmrc`` token, URL credentials, ...) go
through ``memsite hook``, with secrets in the command, its output, its error, a file path,
a task and the first prompt, and tokens that straddle the cuts; then every file of the tree
is read (day logs, ``hot/`` files, checkpoints, the session's end, the search index beside
the tree) and none holds more than a secret's first 6 characters. Secrets are random at run
time: none is committed."""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.store.check import check_tree

_rng = random.Random(34)
AZ09 = string.ascii_letters + string.digits


def word(n: int = 14, alphabet: str = AZ09) -> str:
    """A random secret with a digit and a letter (as a real one has, and the rules ask)."""
    return _rng.choice(string.ascii_letters) + _rng.choice(string.digits) + "".join(
        _rng.choice(alphabet) for _ in range(n - 2)
    )  # fmt: skip


def basic() -> str:
    return base64.b64encode(f"deploy:{word()}".encode()).decode()


# (command line, its secret): 20 real shapes, each with its own random secret
COMMANDS = [
    (f"export DB_PASSWORD={(s := word())}", s),
    (f"GITHUB_TOKEN={(s := word(32))} gh pr list --state open", s),
    (f"mysql -h db.internal -u root -p{(s := word())} app < dump.sql", s),
    (f"curl -u admin:{(s := word())} https://ci.internal/api/json", s),
    (f'curl -H "Authorization: token {(s := word(40, "0123456789abcdef"))}" https://api.github.com/user', s),
    (f"docker login -u deploy -p {(s := word())} registry.internal", s),
    (f"PGPASSWORD={(s := word())} psql -h db.internal -U app -c 'select 1'", s),
    (f"MYSQL_PWD={(s := word())} mysqldump app > app.sql", s),
    (f"API_TOKEN={(s := word(32))} ./scripts/deploy.sh staging", s),
    (f"sshpass -p '{(s := word())}' ssh deploy@web1 uptime", s),
    (f"redis-cli -h cache -a {(s := word())} ping", s),
    (f"openssl enc -aes-256-cbc -salt -k {(s := word())} -in backup.tar -out backup.enc", s),
    (f'curl -H "Authorization: Basic {(s := basic())}" https://jenkins.internal/api', s),
    (f'echo "//npm.internal/:_authToken={(s := word(36))}" >> ~/.npmrc', s),
    (f"git clone https://bot:{(s := word())}@git.internal/team/app.git", s),
    (f"pip config set global.index-url https://ci:{(s := word())}@pypi.internal/simple", s),
    (f"kubectl --token {(s := word(32))} get pods -n prod", s),
    (f"""echo '{{"auths": {{"registry.internal": {{"auth": "{(s := basic())}"}}}}}}' > ~/.docker/config.json""", s),
    (f"vault write auth/userpass/users/ops password={(s := word())} policies=ops", s),
    (f"helm upgrade app ./chart --set db.password={(s := word())}", s),
]  # fmt: skip
GHP = [f"ghp_{word(36)}" for _ in range(3)]  # tokens placed across the cuts
ENV = f"MYSQL_ROOT_PASSWORD={word()}"
GIT_URL = f"https://bot:{word()}@git.internal/team/app.git"
TASK = f"Rotate REDIS_PASSWORD={word()} after the incident"
SECRETS = [
    *(secret for _, secret in COMMANDS),
    *GHP,
    ENV.split("=")[1],
    GIT_URL.split(":")[2].split("@")[0],
    TASK.split("=")[1].split()[0],
]


def event(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": "5e1f0c2a-claude",
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": "/home/you/project",
        "hook_event_name": name,
        **fields,
    }


def leaks(root: Path) -> list[str]:
    """Every secret of which 7 characters in a row are somewhere in the files of the tree or
    beside it (the search index memsite keeps in ``.memsite/``)."""
    text = "\n".join(
        path.read_text("utf-8", "replace") for path in root.parent.rglob("*") if path.is_file()
    )
    return [s for s in SECRETS if any(s[i : i + 7] in text for i in range(len(s) - 6))]


@pytest.fixture
def hook(root: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    (root.parent / ".git").mkdir(exist_ok=True)

    def feed(name: str, **fields: Any) -> None:
        done = CliRunner().invoke(
            cli, ["--root", str(root), "hook"], input=json.dumps(event(name, **fields))
        )
        assert (done.exit_code, done.stderr) == (0, ""), done.stderr

    return feed


def test_no_shell_secret_reaches_any_file_of_the_tree(hook, root: Path) -> None:
    # a prompt whose token straddles the 120 characters the session's task keeps
    hook("SessionStart", source="startup", model="claude-sonnet-4")
    hook("UserPromptSubmit", prompt="Deploy the app " + "." * 90 + f" with {GHP[0]} today")
    for command, _ in COMMANDS:
        response = {"stdout": "done", "stderr": "", "interrupted": False}
        hook("PostToolUse", tool_name="Bash", tool_input={"command": command},
             tool_response=response)  # fmt: skip
    # output: a secret on the first line, and a token across the result's 200-character cut
    hook("PostToolUse", tool_name="Bash", tool_input={"command": "env | grep PASS"},
         tool_response={"stdout": f"{ENV}\nPATH=/usr/bin\n", "stderr": ""})  # fmt: skip
    long_line = "remote: counting objects " + "." * 165 + f" {GHP[1]} done"
    hook("PostToolUse", tool_name="Bash", tool_input={"command": "git fetch origin"},
         tool_response={"stdout": long_line, "stderr": ""})  # fmt: skip
    # a failure's error names the URL with its credentials, as git does
    error = f"Exit code 128\nfatal: unable to access '{GIT_URL}/': Could not resolve host"
    hook("PostToolUseFailure", tool_name="Bash", tool_input={"command": "git pull"},
         error=error)  # fmt: skip
    # a file path and a task that hold a secret
    path = root.parent / "tmp" / f"{GHP[2]}.json"
    hook("PostToolUse", tool_name="Write", tool_input={"file_path": str(path), "content": "{}"},
         tool_response={"structuredPatch": []})  # fmt: skip
    assert leaks(root) == []  # the open burst of edits in hot/harness.json included
    hook("PostToolUse", tool_name="TaskCreate", tool_input={"subject": TASK},
         tool_response={"task": {"id": "1"}})  # fmt: skip
    hook("PreCompact", trigger="manual", custom_instructions="")
    live = Memory(root).session()
    assert live is not None and len(live.pending_actions) == 1
    assert leaks(root) == []
    hook("SessionEnd", reason="prompt_input_exit")

    assert leaks(root) == []
    memory = Memory(root)
    ran = [e for e in memory.entries("activity") if e.title == "ran command"]
    assert len(ran) == len(COMMANDS) + 3  # every command was recorded, not dropped
    said = {e.details["command"]: e for e in ran}
    assert "gh pr list --state open" in ran[1].details["command"]
    assert "[redacted:" in ran[0].details["command"]
    assert all("[redacted:" in e.details["command"] for e in ran[: len(COMMANDS)])
    assert "[redacted:" in said["env | grep PASS"].result
    assert said["git pull"].details["exit"] == "128"
    assert said["git pull"].result.startswith("fatal: unable to access 'https://bot:[redacted")
    assert said["git fetch origin"].result.startswith("remote: counting objects")
    edited = [e for e in memory.entries("activity") if e.title == "edited file"]
    assert len(edited) == 1 and "[redacted: github token]" in edited[0].details["file"]
    assert [p for p in check_tree(root) if p.severity == "error"] == []


def test_the_write_commands_redact_shell_secrets_too(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``memsite log``, ``decide`` and the rest redact through the same rules (intake), so a
    command line pasted into a detail, a result or a body keeps no secret either."""
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    lines = [command for command, _ in COMMANDS]

    def run(*args: str) -> str:
        done = CliRunner().invoke(cli, ["--root", str(root), *args])
        assert done.exit_code == 0, done.output
        return done.stderr

    for command in lines:
        said = run("log", "ran a command", "--detail", f"command={command}")
        assert said.startswith("memsite: redacted 1 secret(s) in detail 'command'"), said
    run("log", "deployed", "--result", lines[0], "--body", "\n".join(lines))
    run("decide", "Keep credentials in the vault", "--why", "\n".join(lines[::-1]))
    assert leaks(root) == []
    [decided] = Memory(root).entries("decision")
    assert "gh pr list --state open" in decided.why and "[redacted: api key]" in decided.why
