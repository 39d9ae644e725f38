"""Secret shapes that must never reach memory, replaced with a visible ``[redacted: kind]``.

Patterns aim at *shapes* (prefixes, lengths, key/value assignments), so hashes, UUIDs, base64
images and prose that merely mentions "secret" or "password" are left alone; the corpus in
``tests/test_redact.py`` keeps both rates honest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ASSIGNED = r"""(?P<prefix>["']?\b{name}\b["']?[ \t]*(?:=|:|=>)[ \t]*["']?)(?P<secret>{value})"""

# (kind, pattern); a pattern with a ``secret`` group redacts only that group.
_PATTERNS: list[tuple[str, str]] = [
    (
        "private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    ("aws access key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    (
        "aws secret key",
        _ASSIGNED.format(
            name=r"(?:aws_?)?secret_?(?:access_?)?key",
            value=r"[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])",
        ),
    ),
    ("github token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b"),
    ("github token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    ("gitlab token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("slack webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    (
        "discord webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}",
    ),
    ("anthropic key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("google api key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("google oauth token", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("huggingface token", r"\bhf_[A-Za-z]{34}\b"),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    ("sendgrid key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![\w\-])"),
    ("twilio key", r"\bSK[0-9a-f]{32}\b"),
    ("mailgun key", r"\bkey-[0-9a-f]{32}\b"),
    ("shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("digitalocean token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    ("telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![\w\-])"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    (
        "azure storage key",
        r"(?P<prefix>AccountKey=)(?P<secret>[A-Za-z0-9+/=]{40,})",
    ),
    (
        "connection string password",
        r"(?P<prefix>\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:)(?P<secret>[^\s@/]{3,})(?=@)",
    ),
    ("bearer token", r"(?P<prefix>\bBearer[ \t]+)(?P<secret>[A-Za-z0-9_\-.=~+/]{16,})"),
    (
        "password",
        _ASSIGNED.format(
            name=r"(?:password|passwd|pwd|pass)", value=r"(?!\[redacted)[^\s\"',;]{4,}"
        ),
    ),
    (
        "api key",
        _ASSIGNED.format(
            name=r"(?:api[_-]?key|apikey|secret[_-]?key|client[_-]?secret|access[_-]?token"
            r"|auth[_-]?token|secret|token)",
            value=r"(?=[^\s\"',;]*\d)(?=[^\s\"',;]*[A-Za-z])(?!\[redacted)[^\s\"',;]{16,}",
        ),
    ),
]

# Lower-case words at least one of which every match of the pattern at the same index
# contains: a substring test is far cheaper than the regex, and most text holds none of them
# (the site build scans every file of a year of memory).
_NEEDLES: list[tuple[str, ...]] = [
    ("private key",),
    ("akia", "asia", "abia", "acca"),
    ("secret",),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ("github_pat_",),
    ("glpat-",),
    ("xox",),
    ("hooks.slack.com",),
    ("discord",),
    ("sk-ant-",),
    ("sk-",),
    ("_live_", "_test_"),
    ("aiza",),
    ("ya29.",),
    ("hf_",),
    ("npm_",),
    ("pypi-",),
    ("sg.",),
    ("sk",),
    ("key-",),
    ("shp",),
    ("_v1_",),
    (":aa",),
    ("eyj",),
    ("accountkey=",),
    ("://",),
    ("bearer",),
    ("pass", "pwd"),
    ("key", "secret", "token"),
]
_CASELESS = ("password", "api key", "aws secret key")
_COMPILED = [
    (kind, re.compile(pattern, re.IGNORECASE if kind in _CASELESS else 0), needles)
    for (kind, pattern), needles in zip(_PATTERNS, _NEEDLES, strict=True)
]


@dataclass(frozen=True)
class Redaction:
    kind: str
    line: int  # 1-based line of the text where the secret started


def redact(text: str) -> tuple[str, list[Redaction]]:
    """Replace every secret shape in ``text``; return the new text and what was found.

    The text is scanned as written and as it will render: a token written with a markdown
    escape (``ghp\\_…``) or an HTML entity (``&#103;hp_…``) shows as the plain token on the
    site, so it is found and redacted too (issue 15.6).
    """
    if not _ENCODED.search(text):  # nothing renders otherwise than it is written
        return _redact_plain(text)
    matches = _matches(_ENCODED.sub(_shown, text))  # the text as the site renders it
    if not matches:  # the common case: no secret, so no map of characters is needed
        return text, []
    starts, ends = _spans(text)
    found: list[Redaction] = []
    hits: list[tuple[int, int, str]] = []
    for kind, match in matches:
        prefix = match.group("prefix") if "prefix" in match.groupdict() else ""
        start, end = starts[match.start()], ends[match.end() - 1]
        found.append(Redaction(kind, text.count("\n", 0, start) + 1))
        hits.append((start, end, (prefix or "") + f"[redacted: {kind}]"))
    for start, end, marker in sorted(_disjoint(hits), reverse=True):
        text = text[:start] + marker + text[end:]
    return text, found


def _redact_plain(text: str) -> tuple[str, list[Redaction]]:
    found: list[Redaction] = []
    lowered = text.lower()
    for kind, pattern, needles in _COMPILED:
        if any(needle in lowered for needle in needles) and pattern.search(text):
            text = pattern.sub(_Replacer(kind, pattern, text, found), text)
            lowered = text.lower()
    return text, found


def _matches(text: str) -> list[tuple[str, re.Match[str]]]:
    lowered = text.lower()
    return [
        (kind, match)
        for kind, pattern, needles in _COMPILED
        if any(needle in lowered for needle in needles)
        for match in pattern.finditer(text)
        if "[redacted" not in match.group(0)
    ]


def _disjoint(hits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The hits that do not overlap an earlier, longer one."""
    kept: list[tuple[int, int, str]] = []
    for hit in sorted(hits, key=lambda h: (h[0], -h[1])):
        if not kept or hit[0] >= kept[-1][1]:
            kept.append(hit)
    return kept


_ENCODED = re.compile(
    r"\\([!-/:-@\[-`{-~])|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
)


def _shown(found: re.Match[str]) -> str:
    """What one escape or character reference shows as."""
    if found.group(1):
        return found.group(1)
    import html  # its table of entities: only for text that holds a reference (issue 35)

    return html.unescape(found.group(0))


def _spans(text: str) -> tuple[list[int], list[int]]:
    """For each character of ``text`` as rendered (``_ENCODED.sub(_shown, text)``: markdown
    backslash escapes and HTML character references resolved, as a reader of the site sees
    it), the start and end in ``text`` of what it came from."""
    starts: list[int] = []
    ends: list[int] = []
    last = 0
    for found in _ENCODED.finditer(text):
        starts += range(last, found.start())
        ends += range(last + 1, found.start() + 1)
        width = len(_shown(found))
        starts += [found.start()] * width
        ends += [found.end()] * width
        last = found.end()
    starts += range(last, len(text))
    ends += range(last + 1, len(text) + 1)
    return starts, ends


class _Replacer:
    """The ``re.sub`` callback for one pattern: records each hit and keeps any prefix."""

    def __init__(self, kind: str, pattern: re.Pattern[str], text: str, found: list[Redaction]):
        self.kind, self.text, self.found = kind, text, found
        self.keeps_prefix = "secret" in pattern.groupindex

    def __call__(self, match: re.Match[str]) -> str:
        self.found.append(Redaction(self.kind, self.text.count("\n", 0, match.start()) + 1))
        marker = f"[redacted: {self.kind}]"
        return match.group("prefix") + marker if self.keeps_prefix else marker


def find_secrets(text: str) -> list[Redaction]:
    """Where ``text`` holds a secret shape (used by the site build to refuse publishing)."""
    return redact(text)[1]
