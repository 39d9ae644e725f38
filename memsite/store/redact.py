"""Secret shapes that must never reach memory, replaced with a visible ``[redacted: kind]``.

Patterns aim at *shapes* (prefixes, lengths, key/value assignments, the flags and headers of
the command lines that carry a secret), so hashes, UUIDs, base64 images and prose that merely
mentions "secret" or "password" are left alone; the corpus in ``tests/test_redact.py`` keeps
both rates honest, and its table of real command lines the shell forms (issue 34).

Every pattern is linear in the text: a scan that can fail after it started (a lookahead, the
arguments between a command and its flag) is bounded, and an unbounded run is only ever the
last thing a pattern matches, so a failed start never rescans a long run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    """One secret shape: its ``kind``, its pattern (with a ``secret`` group, only that group is
    redacted and the ``prefix`` before it kept), and ``needles``, lower-case words at least
    one of which every match contains (a substring test is far cheaper than the regex, and
    most text holds none of them: the site build scans every file of a year of memory)."""

    kind: str
    pattern: str
    needles: tuple[str, ...]
    caseless: bool = False


# What does not start a secret value: an earlier redaction, a variable or a command's output
# (``$X``, ``${X}``, ``$(cmd)``), a placeholder (``<token>``), a mask, a template, a word.
_NOT_A_VALUE = r"(?!\[redacted|\$|<|\*{3}|\{\{|%\(|(?:true|false|null|none)(?![\w-]))"


def _value(least: int, guard: str = "", *, spaces: bool = False) -> str:
    """A secret value at least ``least`` characters long: to the closing quote when the prefix
    opened one (across spaces only when ``spaces``: a passphrase has them, a token never),
    else to the end of the unquoted run. ``guard`` is a lookahead template over ``{run}``,
    the value's characters, bounded so that a failed start costs little."""
    inside = r"\n" if spaces else r"\s"
    runs = (
        (r'(?<=")', rf'[^"{inside}]'),
        (r"(?<=')", rf"[^'{inside}]"),
        (r"(?<![\"'])", r"[^\s\"',;]"),
    )
    return _NOT_A_VALUE + "(?:" + "|".join(
        f"{after}{guard.format(run=run)}{run}{{{least},}}" for after, run in runs
    ) + ")"  # fmt: skip


def _assigned(name: str, value: str) -> str:
    """``name=value``, ``name: value``, ``"name": "value"``, ``name => value``. The name
    may end a longer one (``DB_PASSWORD``, ``_authToken``): only what follows it is checked
    (``PASSWORD_MIN_LENGTH=12`` is no assignment of a password)."""
    return (
        rf"""(?P<prefix>{name}(?![A-Za-z0-9_])["']?[ \t]*(?:=>|=|:)[ \t]*["']?)"""
        rf"(?P<secret>{value})"
    )


# The arguments between a command and one of its flags (at most 24, on the same line and
# segment, each skipped whole: possessive, so a failed start costs one pass over them), and
# the blank before the flag.
_ARGS = r"(?:[ \t]++[^\s|;&]++){0,24}?[ \t]++"


def _flag(commands: str, flags: str, value: str) -> str:
    """A ``flags`` value of one of ``commands`` (``mysql … -pSECRET``); ``flags`` ends with
    what separates the flag from its value."""
    return (
        rf"(?P<prefix>(?<![\w.-])(?:{commands}){_ARGS}(?:{flags})[\"']?)"
        rf"(?P<secret>{value})"
    )


def _option(words: str, value: str, *, single_dash: bool = True) -> str:
    """A long option named for a secret (``--password X``, ``--db-token=X``), and a
    single-dash one when ``single_dash`` (``-storepass X``; no ``-token``: prose says "a
    ``window``-token"); never ``--no-password``, ``--ask-pass`` or ``--password-file``."""
    second = "-?" if single_dash else "-"
    return (
        rf"(?P<prefix>-(?<![\w-]-){second}(?!no-|ask-|with-|use-|show-|prompt-)"
        rf"(?:[a-z0-9]+-){{0,3}}"
        rf"(?:{words})(?![\w-])(?:[ \t]*=[ \t]*|[ \t]+)[\"']?)(?P<secret>{value})"
    )


# a digit and a letter in the value's first 64 characters: "api_key: see-the-vault" is no key
_MIXED = r"(?={run}{{0,63}}\d)(?={run}{{0,63}}[A-Za-z])"
_PASSWORD = _value(4, r"(?![-?+=])", spaces=True)  # not ${X:-default}, ${X:?say}
_FLAG_PASSWORD = _value(3, r"(?!-|env:|file:|fd:|stdin\b)", spaces=True)  # openssl's sources
_TOKEN = _value(8, r"(?!-|(?:id|src|source|type|env|target|mode)=)")
_KEY = _value(16, r"(?![-?+=])" + _MIXED)


SHAPES: tuple[Shape, ...] = (
    Shape(
        "private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        ("private key",),
    ),
    Shape(
        "aws access key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        ("akia", "asia", "abia", "acca"),
    ),
    Shape(
        "aws secret key",
        _assigned(
            r"(?<![A-Za-z0-9])(?:aws_?)?secret_?(?:access_?)?key",
            r"[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])",
        ),
        ("secret",),
        caseless=True,
    ),
    Shape(
        "aws secret key",  # aws configure set aws_secret_access_key SECRET
        r"(?P<prefix>\baws[ \t]+configure[ \t]+set[ \t]+(?:[\w.-]{1,64}\.)?"
        r"aws_(?:secret_access_key|session_token)[ \t]+[\"']?)(?P<secret>" + _TOKEN + ")",
        ("configure",),
    ),
    Shape(
        "github token",
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    Shape("github token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b", ("github_pat_",)),
    Shape("gitlab token", r"\bglpat-[A-Za-z0-9_\-]{20,}", ("glpat-",)),
    Shape("slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", ("xox",)),
    Shape(
        "slack webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
        ("hooks.slack.com",),
    ),
    Shape(
        "discord webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}",
        ("discord",),
    ),
    Shape("anthropic key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    Shape("openai key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",)),
    Shape("stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", ("_live_", "_test_")),
    Shape("google api key", r"\bAIza[0-9A-Za-z_\-]{35}", ("aiza",)),
    Shape("google oauth token", r"\bya29\.[0-9A-Za-z_\-]{20,}", ("ya29.",)),
    Shape("huggingface token", r"\bhf_[A-Za-z]{34}\b", ("hf_",)),
    Shape("npm token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    Shape("pypi token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}", ("pypi-",)),
    Shape("sendgrid key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![\w\-])", ("sg.",)),
    Shape("twilio key", r"\bSK[0-9a-f]{32}\b", ("sk",)),
    Shape("mailgun key", r"\bkey-[0-9a-f]{32}\b", ("key-",)),
    Shape("shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", ("shp",)),
    Shape("digitalocean token", r"\bdo[por]_v1_[a-f0-9]{64}\b", ("_v1_",)),
    Shape("telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![\w\-])", (":aa",)),
    Shape("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", ("eyj",)),
    Shape(
        "azure storage key",
        r"(?P<prefix>AccountKey=)(?P<secret>[A-Za-z0-9+/=]{40,})",
        ("accountkey=",),
    ),
    Shape(
        "connection string password",  # scheme://user:SECRET@host, the user maybe empty
        r"(?P<prefix>\b[a-z][a-z0-9+.\-]{0,31}://[^\s:/@]{0,256}:)(?P<secret>[^\s@/]{3,256})(?=@)",
        ("://",),
    ),
    Shape(
        "bearer token",
        r"(?P<prefix>\bBearer[ \t]+)(?P<secret>[A-Za-z0-9_\-.=~+/]{16,})",
        ("bearer",),
    ),
    Shape(
        "authorization header",  # Authorization: Basic|token|Bot ... SECRET; no scheme: mixed
        r"(?P<prefix>\b(?:Proxy-)?Authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<scheme>[A-Za-z][\w-]{1,31}[ \t]+)?)"
        r"(?P<secret>(?!\[redacted)(?(scheme)|(?=[^\s\"']{0,63}[\d+/=_.-]))"
        r"[A-Za-z0-9_\-.=~+/:%]{8,})",
        ("authorization",),
        caseless=True,
    ),
    Shape(
        "registry auth",  # npmrc _auth=, docker config.json "auth": "base64"
        r"(?P<prefix>(?:\"auth\"|(?<![A-Za-z0-9])_auth)[ \t]*[:=][ \t]*[\"']?)"
        r"(?P<secret>[A-Za-z0-9+/=]{12,}(?![A-Za-z0-9+/=_.\-]))",
        ('"auth"', "_auth"),
    ),
    Shape(
        "password",  # mysql -pSECRET (attached: "-p NAME" names a database)
        _flag(
            r"mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mysqlsh"
            r"|mariadb|mariadb-dump|mariadb-admin",
            "-p",
            _FLAG_PASSWORD,
        ),
        ("mysql", "mariadb"),
    ),
    Shape(
        "password",  # sshpass -p S, docker login -p S, mongosh -p S (not gh auth login -p ssh)
        _flag(
            r"sshpass|(?:docker|podman|nerdctl|buildah|skopeo|registry|oc|cf|az)[ \t]+login"
            r"|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport",
            r"-p[ \t]*",
            _FLAG_PASSWORD,
        ),
        ("sshpass", "login", "mongo"),
    ),
    Shape("password", _flag("redis-cli", r"-a[ \t]*", _FLAG_PASSWORD), ("redis-cli",)),
    Shape("password", _flag("openssl", r"-[kK][ \t]+", _FLAG_PASSWORD), ("openssl",)),
    Shape("password", _flag(r"ldap[a-z]*", r"-w[ \t]*", _FLAG_PASSWORD), ("ldap",)),
    Shape(
        "password",  # curl -u user:SECRET, http -a user:SECRET
        r"(?P<prefix>(?<![\w.-])(?:curl|http|https|xh)"
        + _ARGS
        + r"(?:-u|--user|-U|--proxy-user|-a|--auth)[ \t]*=?[ \t]*[\"']?[^\s:\"']{0,128}:)"
        r"(?P<secret>(?!\$)[^\s\"']{3,})",
        ("curl", "http ", "https ", "xh "),
    ),
    Shape(
        "password",  # .netrc: machine HOST login USER password SECRET
        r"(?P<prefix>\bmachine(?:[ \t]++\S++){1,8}?[ \t]++password[ \t]+[\"']?)"
        r"(?P<secret>" + _FLAG_PASSWORD + ")",
        ("machine",),
    ),
    Shape(
        "password",
        _option(r"password|passwd|pass|passphrase|(?:src|dest)?(?:store|key)pass", _FLAG_PASSWORD),
        ("pass",),
        caseless=True,
    ),
    Shape(
        "api key",
        _option(r"token|secret|api-?key|secret-?key|access-?key", _TOKEN, single_dash=False),
        ("token", "secret", "key"),
        caseless=True,
    ),
    Shape(
        "password",  # DB_PASSWORD=, PGPASSWORD=, MYSQL_PWD=, pass=, openssl's pass:SECRET
        _assigned(
            # each starts with its first letter, which lets the regex engine skip ahead
            r"p(?:(?<![0-9]p)(?:assword|asswd|assphrase)|wd(?<=[_.\-]pwd)"
            r"|ass(?<![A-Za-z0-9]pass)(?=[ \t]*=|:[^\s:]))",
            _PASSWORD,
        ),
        ("pass", "pwd"),
        caseless=True,
    ),
    Shape(
        "api key",  # API_TOKEN=, GITHUB_TOKEN=, _authToken=, client_secret: ...
        _assigned(
            r"[ast](?:(?<=a)pi[_-]?key|(?<=a)pikey|(?<=s)ecret(?:[_-]?key)?|(?<=t)oken)",
            _KEY,
        ),
        ("key", "secret", "token"),
        caseless=True,
    ),
)
_COMPILED = [
    (shape.kind, re.compile(shape.pattern, re.IGNORECASE if shape.caseless else 0), shape.needles)
    for shape in SHAPES
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
    hits = [
        (starts[match.start()], ends[match.end() - 1], kind, match.groupdict().get("prefix") or "")
        for kind, match in matches
    ]
    # built in one pass, lines counted on from the last hit: a text of many secrets is linear
    found: list[Redaction] = []
    pieces: list[str] = []
    last, line = 0, 1
    for start, end, kind, prefix in _disjoint(hits):
        line += text.count("\n", last, start)
        found.append(Redaction(kind, line))
        pieces += [text[last:start], f"{prefix}[redacted: {kind}]"]
        line += text.count("\n", start, end)
        last = end
    pieces.append(text[last:])
    return "".join(pieces), found


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


def _disjoint(hits: list[tuple[int, int, str, str]]) -> list[tuple[int, int, str, str]]:
    """The hits that do not overlap an earlier, longer one, in order."""
    kept: list[tuple[int, int, str, str]] = []
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
        self.at, self.line = 0, 1  # matches come in order: lines are counted on from the last

    def __call__(self, match: re.Match[str]) -> str:
        self.line += self.text.count("\n", self.at, match.start())
        self.at = match.start()
        self.found.append(Redaction(self.kind, self.line))
        marker = f"[redacted: {self.kind}]"
        return match.group("prefix") + marker if self.keeps_prefix else marker


def find_secrets(text: str) -> list[Redaction]:
    """Where ``text`` holds a secret shape (used by the site build to refuse publishing)."""
    return redact(text)[1]
