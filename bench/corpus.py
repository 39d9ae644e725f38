"""Generate a realistic memory tree, and labelled questions about it, for benchmarks.

    python bench/corpus.py OUT_DIR --entries 20000 [--days 365] [--seed 1] [--queries FILE]
        [--common-words]

The default is about a year of one busy agent on a software team: 500 decisions (some
superseding earlier ones), 500 learnings, their warm-log pointers, ~50 activities a day,
sessions that end, a handful of hand-written notes (decision records, runbooks) and a live
hot context. ``OUT_DIR`` ends up holding exactly ``--entries`` entries, rendered with
``memsite.store.format.render_entry`` in the layout ``Memory`` writes, without going through the
locked API (which would take minutes for a year). Output is a pure function of the
arguments: the same seed gives the same bytes.

``--queries FILE`` writes JSON lines ``{"q": ..., "relevant": ["path#id", ...], "kind": ...}``:
questions phrased the way a person would ask them (synonyms, not the entry's title words),
each answered by known entries.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

import common_words

from memsite.store.format import DECISIONS, LEARNINGS, next_free_id
from memsite.store.format import render_entry as _render
from memsite.store.markup import slugify
from memsite.store.model import Entry, HotContext
from memsite.store.tree import init_tree

END = dt.date(2026, 11, 27)  # fixed, so the output never depends on the clock

# (name, ways people refer to it)
SERVICES = [
    ("auth-service", ["login service", "authentication backend", "sign-in service"]),
    ("billing", ["invoicing service", "billing backend", "invoice generation"]),
    ("search-indexer", ["search indexing job", "indexer", "search ingestion"]),
    ("notification-worker", ["notifier", "email and push worker", "notifications"]),
    ("api-gateway", ["edge proxy", "gateway", "public API front door"]),
    ("user-profile", ["profile service", "accounts service", "user settings backend"]),
    ("reporting", ["reports pipeline", "analytics exports", "monthly reports"]),
    ("checkout", ["purchase flow", "cart and checkout", "order placement"]),
    ("inventory", ["stock service", "warehouse counts", "inventory tracking"]),
    ("scheduler", ["job scheduler", "cron runner", "scheduled tasks"]),
    ("file-storage", ["uploads service", "blob storage layer", "attachments"]),
    ("web-frontend", ["web app", "frontend", "browser client"]),
    ("mobile-api", ["app backend", "API for the phone apps", "mobile endpoints"]),
    ("payments-gateway", ["card processing", "payment provider integration", "payments"]),
    ("audit-log", ["audit trail", "compliance log", "activity history"]),
    ("recommendations", ["recs engine", "suggestions service", "related items"]),
    ("admin-console", ["back office", "internal admin UI", "ops console"]),
    ("data-warehouse", ["warehouse loads", "analytics database", "ELT jobs"]),
    ("email-renderer", ["email templates", "mail rendering", "transactional email"]),
    ("feature-store", ["ML features", "feature pipeline", "model inputs"]),
    ("rate-card", ["pricing service", "price lists", "pricing rules"]),
    ("geo-lookup", ["address lookup", "geocoding", "location service"]),
]

# component: (name, aliases, [(old, new, what was wrong with old, what new gives)], tags)
COMPONENTS = [
    (
        "token cache",
        ["cache of access tokens", "token caching", "where we keep issued tokens"],
        [
            ("an in-process LRU", "Redis", "lost every token on deploy", "survives restarts"),
            (
                "Redis",
                "a signed stateless token",
                "was a single point of failure",
                "needs no lookup",
            ),
        ],
        ["cache", "tokens"],
    ),
    (
        "session store",
        ["where sessions live", "session storage", "login sessions"],
        [
            (
                "Memcached",
                "Redis",
                "evicted sessions under memory pressure",
                "persists and expires keys",
            ),
            (
                "cookie-only sessions",
                "server-side sessions",
                "hit the 4 KB cookie limit",
                "can be revoked",
            ),
        ],
        ["sessions"],
    ),
    (
        "rate limiter",
        ["request throttling", "limits on requests", "throttle"],
        [
            (
                "a fixed-window counter",
                "a token bucket",
                "let bursts through at window edges",
                "smooths bursts",
            ),
            (
                "nginx limit_req",
                "a Redis-backed limiter",
                "could not share state between pods",
                "is shared by all replicas",
            ),
        ],
        ["rate-limiting"],
    ),
    (
        "retry policy",
        ["retries", "backoff when calls fail", "how we retry"],
        [
            (
                "fixed one-second retries",
                "exponential backoff with jitter",
                "caused a thundering herd",
                "spreads retries out",
            ),
            (
                "unbounded retries",
                "a retry budget of 10%",
                "amplified an outage threefold",
                "caps extra load",
            ),
        ],
        ["resilience"],
    ),
    (
        "database migrations",
        ["schema changes", "migration tooling", "altering tables"],
        [
            (
                "hand-written SQL scripts",
                "Alembic",
                "drifted between environments",
                "records what ran where",
            ),
            (
                "migrations at deploy time",
                "expand-and-contract migrations",
                "locked the orders table for minutes",
                "never blocks writes",
            ),
        ],
        ["database", "migrations"],
    ),
    (
        "job queue",
        ["background jobs", "task queue", "async work"],
        [
            (
                "cron plus database polling",
                "Celery on RabbitMQ",
                "polled the jobs table every second",
                "pushes work to idle workers",
            ),
            ("Celery", "RQ", "needed too much configuration to debug", "is small enough to read"),
        ],
        ["queue", "workers"],
    ),
    (
        "config loading",
        ["settings", "configuration", "how settings are read"],
        [
            (
                "INI files",
                "environment variables via pydantic-settings",
                "differed per host",
                "is validated at start-up",
            ),
            (
                "settings scattered in modules",
                "one typed Settings object",
                "hid defaults in imports",
                "lists every option in one place",
            ),
        ],
        ["config"],
    ),
    (
        "logging",
        ["log output", "structured logs", "what we log"],
        [
            (
                "plain-text logs",
                "JSON logs",
                "could not be queried by field",
                "is searchable by request id",
            ),
            (
                "DEBUG in production",
                "INFO with sampled DEBUG",
                "filled the disk twice",
                "keeps volume predictable",
            ),
        ],
        ["observability"],
    ),
    (
        "feature flags",
        ["toggles", "flags for gradual rollout", "switching features on"],
        [
            (
                "constants in settings",
                "a flag service",
                "needed a deploy to flip",
                "flips at runtime",
            ),
            (
                "per-user flags in the database",
                "percentage rollouts",
                "did not scale past 100k users",
                "needs no per-user rows",
            ),
        ],
        ["rollout"],
    ),
    (
        "CI pipeline",
        ["build pipeline", "continuous integration", "checks on pull requests"],
        [
            (
                "Jenkins",
                "GitHub Actions",
                "needed a full-time babysitter",
                "lives next to the code",
            ),
            (
                "one serial job",
                "sharded test jobs",
                "took 40 minutes per push",
                "finishes in 9 minutes",
            ),
        ],
        ["ci"],
    ),
    (
        "connection pool",
        ["database connections", "pooling of connections", "Postgres connections"],
        [
            (
                "a connection per request",
                "PgBouncer in transaction mode",
                "exhausted max_connections at peak",
                "multiplexes clients",
            ),
            (
                "SQLAlchemy's default pool",
                "a pool of 20 with pre-ping",
                "returned dead connections after failover",
                "drops stale connections",
            ),
        ],
        ["database", "performance"],
    ),
    (
        "API pagination",
        ["paging of list endpoints", "pagination", "how lists are split into pages"],
        [
            (
                "offset pagination",
                "cursor pagination",
                "skipped rows when items were inserted",
                "is stable under writes",
            ),
            (
                "page numbers in the path",
                "a next link in the response",
                "broke clients on every change",
                "lets the server change paging",
            ),
        ],
        ["api"],
    ),
    (
        "error reporting",
        ["crash reports", "exception tracking", "where errors go"],
        [
            ("email alerts", "Sentry", "buried real errors in noise", "groups errors by cause"),
            (
                "alerts on every exception",
                "alerts on error-rate SLOs",
                "paged people for retries that worked",
                "pages only on user impact",
            ),
        ],
        ["observability", "alerts"],
    ),
    (
        "secrets handling",
        ["credentials management", "where secrets are kept", "API keys and passwords"],
        [
            (
                "env files in the repo",
                "Vault",
                "leaked a key in a fork",
                "rotates and audits access",
            ),
            (
                "long-lived cloud keys",
                "short-lived OIDC credentials",
                "were never rotated",
                "expire within an hour",
            ),
        ],
        ["security"],
    ),
    (
        "password hashing",
        ["hashing of passwords", "credential hashing", "how passwords are stored"],
        [
            ("bcrypt with cost 10", "Argon2id", "fell behind current guidance", "is memory-hard"),
            (
                "SHA-256 with a salt",
                "bcrypt with cost 12",
                "was far too fast to brute force",
                "is deliberately slow",
            ),
        ],
        ["security"],
    ),
    (
        "webhook delivery",
        ["outgoing webhooks", "callbacks to customers", "event notifications to partners"],
        [
            (
                "synchronous delivery in the request",
                "an outbox table and a delivery worker",
                "slowed requests when partners were down",
                "retries without blocking users",
            ),
            (
                "unsigned payloads",
                "HMAC-signed payloads",
                "let anyone forge events",
                "lets partners verify the sender",
            ),
        ],
        ["webhooks", "api"],
    ),
    (
        "test fixtures",
        ["test data setup", "fixtures", "how tests get their data"],
        [
            (
                "a shared SQL dump",
                "factory functions",
                "made tests depend on each other",
                "builds only what a test needs",
            ),
            (
                "mocked HTTP calls",
                "recorded responses replayed with VCR",
                "drifted from the real API",
                "replays real traffic",
            ),
        ],
        ["testing"],
    ),
    (
        "search ranking",
        ["result ordering", "relevance", "how search results are ranked"],
        [
            (
                "LIKE queries",
                "Postgres full-text search",
                "could not rank by relevance",
                "ranks with ts_rank",
            ),
            (
                "Postgres full-text search",
                "OpenSearch with BM25",
                "was slow past ten million rows",
                "scales out and ranks better",
            ),
        ],
        ["search"],
    ),
    (
        "deploy strategy",
        ["releases", "how we ship", "rollouts to production"],
        [
            (
                "in-place restarts",
                "blue-green deploys",
                "dropped requests during restarts",
                "switches traffic atomically",
            ),
            (
                "deploying all pods at once",
                "canary releases at 5%",
                "shipped a bad build to everyone",
                "limits the blast radius",
            ),
        ],
        ["deploys"],
    ),
    (
        "HTTP client",
        ["outbound calls", "calls to other services", "HTTP library"],
        [
            ("requests", "httpx", "had no async support", "supports async and HTTP/2"),
            (
                "no timeouts",
                "explicit 5-second timeouts",
                "hung workers when a dependency stalled",
                "fails fast",
            ),
        ],
        ["http"],
    ),
    (
        "data serialization",
        ["wire format", "payload encoding", "message format"],
        [
            (
                "pickle",
                "JSON with a schema",
                "was unsafe to load from other services",
                "is safe and language neutral",
            ),
            ("JSON", "Protocol Buffers", "doubled payload sizes", "is compact and typed"),
        ],
        ["api", "performance"],
    ),
    (
        "time zones",
        ["timestamps", "dates and times", "clock handling"],
        [
            (
                "naive local datetimes",
                "UTC everywhere with aware datetimes",
                "broke twice a year at DST",
                "has no ambiguous hours",
            ),
        ],
        ["correctness"],
    ),
]

POLICIES = [
    (
        "Require two approvals for changes to {svc}",
        "Two incidents in {svc} came from changes reviewed by one person in a hurry.",
        "Slower merges for small fixes.",
        ["who has to approve changes to the {alias}", "how many reviewers does the {alias} need"],
        ["review", "process"],
    ),
    (
        "Freeze {svc} deploys on Fridays",
        "Weekend on-call for {svc} is thin and Friday deploys caused three pages this quarter.",
        "Urgent fixes need a written exception.",
        [
            "can we ship the {alias} at the end of the week",
            "why no releases of the {alias} on Friday",
        ],
        ["deploys", "process"],
    ),
    (
        "Deprecate the v1 endpoints of {svc}",
        "Keeping v1 of {svc} alive doubles the test matrix; usage dropped below 2% of calls.",
        "A few partners still call v1 and need a migration guide.",
        [
            "when does the old version of the {alias} API go away",
            "what happens to v1 of the {alias}",
        ],
        ["api", "deprecation"],
    ),
    (
        "Give {svc} its own database",
        "{svc} shared tables with three other services, so every schema change needed four teams.",
        "Cross-service joins become API calls.",
        ["should the {alias} keep sharing tables", "why did the {alias} get a separate database"],
        ["database", "architecture"],
    ),
    (
        "Set a 300 ms p99 latency budget for {svc}",
        "Pages call {svc} in sequence, so its tail latency decides the page load time.",
        "Some features will need caching to fit the budget.",
        ["what latency target does the {alias} have", "how fast must the {alias} answer"],
        ["performance", "slo"],
    ),
]

# learning facts: (category, title, why, [questions]); {svc} and {alias} are filled in
FACTS = [
    (
        "testing",
        "test_token_refresh in {svc} is flaky because it reads the wall clock",
        "It failed 7 times in 200 CI runs around midnight UTC; passing now= to the function fixed it.",
        [
            "why does the token refresh test of the {alias} fail at random",
            "intermittent test failure near midnight in the {alias}",
        ],
    ),
    (
        "testing",
        "{svc} integration tests collide on port 8080 on shared CI runners",
        "Two jobs on one runner both bound 8080; binding port 0 and reading the port back fixed it.",
        [
            "address already in use errors in {alias} CI",
            "why do the {alias} integration tests fail when jobs run together",
        ],
    ),
    (
        "testing",
        "Snapshot tests in {svc} break when dict order changes",
        "PYTHONHASHSEED differs between runs, so sets printed into snapshots reorder; sort before snapshotting.",
        [
            "golden output of the {alias} changes between runs",
            "nondeterministic snapshots in {alias} tests",
        ],
    ),
    (
        "debugging",
        "{svc} 502s came from the load balancer idle timeout",
        "The LB closed idle keep-alive connections after 60 s while gunicorn kept them for 75 s.",
        [
            "bad gateway errors in front of the {alias}",
            "what caused the intermittent 502 from the {alias}",
        ],
    ),
    (
        "debugging",
        "Memory growth in {svc} was an unbounded lru_cache on a method",
        "lru_cache on a method keeps every self alive; the worker grew 40 MB an hour.",
        ["why does the {alias} leak memory", "{alias} workers grow until they are OOM killed"],
    ),
    (
        "debugging",
        "Duplicate emails from {svc} were retries of a committed transaction",
        "The task committed, then timed out on the ack and was retried; an idempotency key stops it.",
        [
            "customers got the same message twice from the {alias}",
            "double sends after retries in the {alias}",
        ],
    ),
    (
        "performance",
        "{svc} list endpoint did a query per row",
        "An N+1 over related objects made the page issue 300 queries; select_related brought it to 2.",
        ["why was the {alias} listing so slow", "too many SQL queries on the {alias} index page"],
    ),
    (
        "performance",
        "{svc} reports are slow without an index on created_at",
        "The monthly query scanned 80 million rows; a partial index on created_at cut it from 40 s to 0.3 s.",
        [
            "{alias} queries filtering by date take forever",
            "which index speeds up the {alias} monthly report",
        ],
    ),
    (
        "performance",
        "JSON encoding dominates {svc} response time",
        "Profiling showed 60% of request time in json.dumps of large payloads; orjson halved it.",
        [
            "where does the {alias} spend its time per request",
            "serializing responses is the bottleneck in the {alias}",
        ],
    ),
    (
        "operations",
        "{svc} pods restart when the liveness probe hits the database",
        "A slow database made the probe fail and Kubernetes killed healthy pods; liveness must not check dependencies.",
        [
            "why do {alias} containers keep getting restarted during database slowness",
            "health check design for the {alias}",
        ],
    ),
    (
        "operations",
        "Disk on the {svc} host filled with rotated logs",
        "logrotate kept 52 weeks of uncompressed logs; compress and keep 4.",
        ["the {alias} machine ran out of disk", "what filled the disk on the {alias} server"],
    ),
    (
        "operations",
        "{svc} needs a drain period before shutdown",
        "SIGTERM killed in-flight requests; a 20-second preStop sleep lets the LB stop routing first.",
        ["requests fail during {alias} deploys", "graceful shutdown of the {alias}"],
    ),
    (
        "security",
        "{svc} logged bearer tokens in request headers",
        "Debug logging dumped Authorization headers; the log filter now masks them.",
        ["did the {alias} write credentials into logs", "token leak through {alias} debug output"],
    ),
    (
        "security",
        "CSRF protection was off for the {svc} JSON endpoints",
        "The exemption for the API also covered cookie-authenticated browser calls.",
        [
            "cross-site request forgery gap in the {alias}",
            "which {alias} endpoints skipped CSRF checks",
        ],
    ),
    (
        "database",
        "Long transactions in {svc} blocked autovacuum",
        "An idle-in-transaction session held back xmin for hours and tables bloated; set idle_in_transaction_session_timeout.",
        [
            "table bloat in the {alias} database",
            "why autovacuum could not clean up for the {alias}",
        ],
    ),
    (
        "database",
        "{svc} migration locked a hot table",
        "ALTER TABLE ... ADD COLUMN with a default rewrote the table on the old Postgres version.",
        [
            "schema change that froze writes in the {alias}",
            "why the {alias} migration caused downtime",
        ],
    ),
    (
        "tooling",
        "pip resolves different versions for {svc} on CI and laptops",
        "Unpinned transitive dependencies; a lock file with hashes makes the builds reproducible.",
        [
            "{alias} builds differ between CI and local machines",
            "reproducible dependency installs for the {alias}",
        ],
    ),
    (
        "tooling",
        "ruff replaces flake8 and isort in {svc} in one pass",
        "Lint time went from 38 s to under a second and the config moved into pyproject.toml.",
        ["faster linting for the {alias}", "which linter does the {alias} use now"],
    ),
    (
        "process",
        "Small pull requests to {svc} get reviewed within a day",
        "PRs under 200 lines waited 5 hours on average; over 800 lines waited 3 days.",
        ["how big should {alias} pull requests be", "why do large {alias} changes sit unreviewed"],
    ),
    (
        "process",
        "Writing the rollback step first made {svc} deploys calmer",
        "Every rollout plan for {svc} now starts with how to undo it; two incidents were shorter because of it.",
        ["how do we plan risky {alias} releases", "undo plan before shipping the {alias}"],
    ),
    (
        "dependencies",
        "Upgrading the ORM in {svc} changed lazy loading defaults",
        "The new major version raised on lazy loads in async code; explicit loader options fixed the warnings.",
        [
            "what broke after the ORM upgrade in the {alias}",
            "lazy load errors in the {alias} after upgrading",
        ],
    ),
    (
        "dependencies",
        "{svc} pinned an old TLS library that broke on the new base image",
        "The base image moved to OpenSSL 3 and the pinned wheel had no build for it.",
        [
            "SSL errors after the {alias} image update",
            "why the {alias} container failed to start after the base image bump",
        ],
    ),
]

CATEGORY_EXTRA = {
    "testing": "Add a regression test that runs the case a hundred times.",
    "debugging": "Found by bisecting the last week of deploys.",
    "performance": "Measured on a production-sized copy of the data.",
    "operations": "Added to the runbook.",
    "security": "Reviewed with the security channel; no customer data left the system.",
    "database": "Watch pg_stat_activity during the next migration.",
    "tooling": "Documented in the contributing guide.",
    "process": "Shared at the weekly retro.",
    "dependencies": "Added the package to the weekly update check.",
}

REVISIT_REASONS = [
    "cost more to run than it saved",
    "needed skills nobody on the team has",
    "added latency to every call",
    "caused two incidents in its first month",
]
AUTHORS = ["agent", "ana", "bram", "chen", "dmitri", "eve", "farah", "gus"]
FILES = [
    "src/{pkg}/api.py",
    "src/{pkg}/models.py",
    "src/{pkg}/tasks.py",
    "src/{pkg}/settings.py",
    "src/{pkg}/cache.py",
    "tests/test_{pkg}.py",
    "migrations/versions/{n:04d}_{pkg}.py",
    "deploy/{pkg}/values.yaml",
    "docs/{pkg}.md",
    ".github/workflows/{pkg}.yml",
]
RESULTS_FAIL = [
    "{k} failures in test_{pkg}_retries",
    "timeout in test_{pkg}_webhooks after 30s",
    "{k} failures, all in the new fixtures",
    "flaky failure in test_{pkg}_clock",
]


@dataclass
class Spec:
    """One cold entry before ids are assigned."""

    kind: str
    title: str
    when: dt.datetime
    fields: dict[str, str]
    body: str = ""
    author: str | None = None
    supersedes: Spec | None = None
    questions: list[str] = field(default_factory=list)
    chain: list[Spec] = field(default_factory=list)
    id: str = ""


def _pkg(service: str) -> str:
    return service.replace("-", "_")


def _moment(rng: random.Random, day: dt.date) -> dt.datetime:
    seconds = rng.randrange(8 * 3600, 19 * 3600)
    return dt.datetime.combine(day, dt.time()) + dt.timedelta(seconds=seconds)


def _author(rng: random.Random) -> str | None:
    return rng.choice(AUTHORS) if rng.random() < 0.7 else None


def _decisions(rng: random.Random, count: int, days: list[dt.date]) -> list[Spec]:
    subjects = [(s, c) for s in range(len(SERVICES)) for c in range(len(COMPONENTS))]
    subjects += [(s, -1 - p) for s in range(len(SERVICES)) for p in range(len(POLICIES))]
    rng.shuffle(subjects)
    revisits = count // 8
    specs: list[Spec] = []
    for service_index, subject in subjects[: count - revisits]:
        service, aliases = SERVICES[service_index]
        when = _moment(rng, rng.choice(days[:-1] or days))
        if subject < 0:
            title, why, risk, asks, tags = POLICIES[-1 - subject]
            alias = rng.choice(aliases)
            spec = Spec(
                "decision",
                title.format(svc=service),
                when,
                {"why": why.format(svc=service), "risk": risk},
                author=_author(rng),
                questions=[q.format(alias=alias) for q in asks],
            )
            spec.fields["tags"] = ", ".join([service, *tags])
        else:
            spec = _swap(rng, service, aliases, COMPONENTS[subject], when, None)
        spec.chain = [spec]
        specs.append(spec)
    swaps = [s for s in specs if s.questions and "component" in s.fields.get("_subject", "")]
    rng.shuffle(swaps)
    for original in swaps[:revisits]:
        latest = original.chain[-1]
        later = [d for d in days if d > latest.when.date()]
        if not later:
            continue
        service, component = original.fields["_subject"].split("|")[1:]
        (service, aliases) = next(s for s in SERVICES if s[0] == service)
        comp = next(c for c in COMPONENTS if c[0] == component)
        spec = _swap(rng, service, aliases, comp, _moment(rng, rng.choice(later)), latest)
        original.chain.append(spec)
        spec.chain = original.chain
        specs.append(spec)
    while len(specs) < count:  # few subjects could be revisited: add more policies elsewhere
        service, aliases = rng.choice(SERVICES)
        title = f"Review {service} error budgets every {rng.choice(['sprint', 'month', 'quarter'])}"
        spec = Spec(
            "decision",
            title,
            _moment(rng, rng.choice(days)),
            {"why": f"{service} burned its error budget without anyone noticing."},
        )
        spec.chain = [spec]
        specs.append(spec)
    return specs


def _swap(rng, service, aliases, comp, when, previous: Spec | None) -> Spec:
    name, comp_aliases, options, tags = comp
    if previous is None:
        old, new, problem, gain = rng.choice(options)
    else:
        old = previous.fields["_new"]
        choices = list(dict.fromkeys(name for pair in options for name in pair[:2]))
        new = rng.choice([name for name in choices if name != old])
        problem = rng.choice(REVISIT_REASONS)
        gain = "is what we go back to" if any(o[0] == new for o in options) else "fits better now"
    templates = [
        "Use {new} for the {comp} in {svc}",
        "Replace {old} with {new} for {svc} {comp}",
        "Move the {svc} {comp} to {new}",
        "Switch {svc} {comp} from {old} to {new}",
    ]
    if previous is not None:
        templates = ["Revisit {svc} {comp}: {new} instead of {old}", "Move {svc} {comp} off {old}"]
    title = rng.choice(templates).format(new=new, old=old, comp=name, svc=service)
    title = title[0].upper() + title[1:]
    why = f"{old[0].upper() + old[1:]} {problem}; {new} {gain}."
    if rng.random() < 0.5:
        before = rng.randrange(120, 2000)
        why += f"\nIn staging p95 went from {before} ms to {before // rng.randrange(2, 9)} ms."
    fields = {"why": why}
    if rng.random() < 0.6:
        fields["risk"] = rng.choice(
            [
                f"Adds an operational dependency on {new}.",
                f"Needs a dual-write period while {old} is drained.",
                f"The team has little experience running {new}.",
                "Rollback means restoring from the nightly backup.",
            ]
        )
    alias, comp_alias = rng.choice(aliases), rng.choice(comp_aliases)
    questions = [
        f"why did the {alias} stop using {old}",
        f"what do we use for {comp_alias} in the {alias}",
        f"reason for picking {new} for {comp_alias} ({alias})",
    ]
    spec = Spec("decision", title, when, fields, author=_author(rng), supersedes=previous)
    spec.questions = questions
    spec.fields["_subject"] = f"component|{service}|{name}"
    spec.fields["_new"] = new
    spec.fields["_tags"] = ", ".join([service, *tags])
    if rng.random() < 0.3:
        spec.body = _decision_body(rng, service, old, new)
    return spec


def _decision_body(rng: random.Random, service: str, old: str, new: str) -> str:
    flag = f"{_pkg(service)}_{slugify(new, 20).replace('-', '_')}"
    lines = [
        "Alternatives considered:",
        "",
        f"- Keep {old} and tune it: buys a month at most.",
        f"- {new[0].upper() + new[1:]}: chosen.",
        "",
        f"Rollout behind the `{flag}` flag, staging first, then 5% of production traffic.",
    ]
    if rng.random() < 0.4:
        lines += [
            "",
            "```python",
            f"if flags.enabled({flag!r}):",
            "    return new_path(request)",
            "```",
        ]
    return "\n".join(lines)


def _learnings(rng: random.Random, count: int, days: list[dt.date]) -> list[Spec]:
    pairs = [(f, s) for f in range(len(FACTS)) for s in range(len(SERVICES))]
    rng.shuffle(pairs)
    specs: list[Spec] = []
    first: dict[tuple[int, int], Spec] = {}
    for number in range(count):
        fact_index, service_index = pairs[number % len(pairs)]
        category, title, why, asks = FACTS[fact_index]
        service, aliases = SERVICES[service_index]
        alias = rng.choice(aliases)
        fields = {"category": category, "why": why.format(svc=service)}
        if rng.random() < 0.5:
            fields["why"] += " " + CATEGORY_EXTRA[category]
        spec = Spec(
            "learning",
            title.format(svc=service),
            _moment(rng, rng.choice(days)),
            fields,
            author=_author(rng),
            questions=[q.format(alias=alias) for q in asks],
        )
        spec.fields["_tags"] = ", ".join([service, category])
        if rng.random() < 0.15:
            spec.body = (
                "Reproduce with:\n\n```console\n"
                f"$ pytest tests/test_{_pkg(service)}.py -x -p no:randomly --count 100\n```"
            )
        # the same lesson learnt twice: both entries answer its questions
        spec.chain = first.setdefault((fact_index, service_index), spec).chain
        spec.chain.append(spec)
        specs.append(spec)
    return specs


def _cold_entry(spec: Spec) -> Entry:
    fields = {k: v for k, v in spec.fields.items() if not k.startswith("_")}
    if spec.supersedes is not None:
        fields["supersedes"] = spec.supersedes.id
    if "_tags" in spec.fields:
        fields["tags"] = spec.fields["_tags"]
    if spec.author:
        fields["author"] = spec.author
    return Entry(
        spec.id, spec.kind, "cold", spec.title, spec.when.date(), fields=fields, body=spec.body
    )


def _activity(rng: random.Random, service: str) -> tuple[str, dict[str, str], str, str]:
    """(action, details, result, body) of one everyday activity."""
    pkg = _pkg(service)
    roll = rng.random()
    files = rng.sample(FILES, 2)
    path = rng.choice(files).format(pkg=pkg, n=rng.randrange(1, 400))
    if roll < 0.25:
        suite = rng.choice(["unit", "integration", "e2e", "contract"])
        passed = rng.randrange(40, 2400)
        if rng.random() < 0.25:
            result = rng.choice(RESULTS_FAIL).format(k=rng.randrange(1, 6), pkg=pkg)
        else:
            result = f"all {passed} passed"
        return "ran tests", {"suite": suite, "service": service, "passed": str(passed)}, result, ""
    if roll < 0.4:
        number = rng.randrange(1000, 9999)
        branch = (
            f"{rng.choice(['fix', 'feat', 'chore', 'refactor'])}/{pkg}-{rng.randrange(100, 999)}"
        )
        return "opened PR", {"pr": f"#{number}", "branch": branch}, f"CI green on #{number}", ""
    if roll < 0.52:
        number = rng.randrange(1000, 9999)
        verdict = rng.choice(
            [
                "approved",
                "requested changes: missing tests",
                "approved with nits",
                "asked to split it",
            ]
        )
        return "reviewed PR", {"pr": f"#{number}", "service": service}, verdict, ""
    if roll < 0.62:
        version = f"v{rng.randrange(1, 4)}.{rng.randrange(0, 30)}.{rng.randrange(0, 12)}"
        env = rng.choice(["staging", "staging", "production"])
        result = rng.choice(["healthy after 10 minutes", "rolled back: error rate 4%", "healthy"])
        return "deployed", {"service": service, "version": version, "env": env}, result, ""
    if roll < 0.72:
        bug = f"BUG-{rng.randrange(1000, 9999)}"
        body = ""
        if rng.random() < 0.3:
            body = (
                "Traceback seen in the logs:\n\n```text\nTraceback (most recent call last):\n"
                f'  File "{path}", line {rng.randrange(10, 900)}, in handle\n'
                "KeyError: 'expires_at'\n```"
            )
        return "fixed bug", {"issue": bug, "file": path}, f"{bug} closed", body
    if roll < 0.8:
        alert = rng.choice(
            ["HighErrorRate", "LatencyP99", "QueueBacklog", "DiskFull", "CertExpiry"]
        )
        cause = rng.choice(
            [
                "noisy neighbour on the node",
                "a slow dependency",
                "a bad deploy",
                "a traffic spike from a partner",
            ]
        )
        return "investigated alert", {"alert": alert, "service": service}, f"cause: {cause}", ""
    if roll < 0.86:
        dep = rng.choice(["django", "sqlalchemy", "celery", "redis", "httpx", "pydantic", "boto3"])
        old = f"{rng.randrange(1, 5)}.{rng.randrange(0, 20)}"
        return (
            "updated dependency",
            {"package": dep, "from": old, "service": service},
            "tests pass",
            "",
        )
    if roll < 0.92:
        return (
            "refactored",
            {"file": path},
            rng.choice(["no behaviour change", "removed 120 lines", "split into two modules"]),
            "",
        )
    if roll < 0.96:
        return "read code", {"file": path}, "", ""
    return "triaged issues", {"service": service, "count": str(rng.randrange(2, 15))}, "", ""


NOTE_KINDS = ("adr", "runbook", "meeting")


def _note(
    rng: random.Random, number: int, day: dt.date, decision: Spec | None
) -> tuple[str, str, list[str]]:
    """(relative path, text, questions) of one hand-written note."""
    service, aliases = SERVICES[number % len(SERVICES)]
    kind = NOTE_KINDS[number % len(NOTE_KINDS)]
    if kind == "adr" and decision is not None:
        service = decision.fields["_subject"].split("|")[1]
        aliases = next(names for name, names in SERVICES if name == service)
    alias = rng.choice(aliases)
    if kind == "adr" and decision is not None:
        chosen = decision.fields["_new"]
        title = f"ADR {number + 1:04d}: {decision.title}"
        text = "\n".join(
            [
                f"# {title}",
                "",
                f"Date: {day.isoformat()}",
                "Status: accepted",
                "",
                "## Context",
                "",
                decision.fields["why"].replace("\n", " "),
                f"The {alias} team asked for a decision before the next quarter's roadmap.",
                "",
                "## Decision Outcome",
                "",
                f"Chosen option: {chosen}, because it is the only option that removes the problem",
                "without a rewrite.",
                "",
                "## Consequences",
                "",
                "- Good: fewer pages for on-call.",
                f"- Bad: one more moving part to understand when debugging {service}.",
                "",
            ]
        )
        questions = [
            f"what were the consequences of the {alias} architecture record about {chosen}"
        ]
        return f"notes/adr/{number + 1:04d}-{slugify(decision.title, 40)}.md", text, questions
    if kind == "runbook":
        text = "\n".join(
            [
                f"# Runbook: {service}",
                "",
                f"Date: {day.isoformat()}",
                "",
                "## Symptoms",
                "",
                f"- Error rate of {service} above 2% for five minutes.",
                "- Queue depth growing without consumers.",
                "",
                "## Diagnosis",
                "",
                f"Check the dashboard `{service}-overview`, then the worker logs:",
                "",
                "```console",
                f"$ kubectl logs deploy/{service} --since=15m | grep -i error",
                "```",
                "",
                "## Fix",
                "",
                f"Restart the {service} workers one at a time; if the error rate stays up, roll back",
                "to the previous version and page the owning team.",
                "",
            ]
        )
        questions = [f"what to do when the {alias} error rate is high"]
        return f"notes/runbooks/{service}-{number}.md", text, questions
    text = "\n".join(
        [
            "---",
            f"title: Planning meeting {day.isoformat()}",
            f"date: {day.isoformat()}",
            "---",
            "",
            "## Attendees",
            "",
            ", ".join(rng.sample(AUTHORS[1:], 4)),
            "",
            "## Notes",
            "",
            f"- The {service} migration slips two weeks; blocked on the data backfill.",
            "- On-call handover moves to Tuesdays.",
            "",
            "## Action items",
            "",
            f"- [ ] Write the backfill plan for {service}",
            "- [ ] Update the on-call calendar",
            "",
        ]
    )
    questions = [f"why is the {alias} migration late"]
    return f"notes/meetings/{day.isoformat()}-planning-{number}.md", text, questions


PERSONA = """\
# Persona

## Identity

A coding agent on the platform team: keeps services healthy, lands migrations, reviews pull
requests and writes down why things are the way they are.

## Voice

Short, concrete, no hype. Numbers over adjectives.

## Standing preferences

- Small pull requests; tests with every change.
- Never deploy on Fridays without an exception written down.
- Prefer boring technology the team already runs.
"""


def build(
    out: Path, entries: int, days: int, seed: int, everyday: bool = False
) -> list[dict[str, object]]:
    """Write the tree into ``out`` (absent or empty); return the labelled questions. With
    ``everyday``, most activities also get prose full of everyday words (bench/common_words.py)."""
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out}: not empty; give a new folder")
    rng = random.Random(seed)
    # its own stream: the tree holds the same entries with and without the everyday prose
    common = random.Random(seed + 1_000_003) if everyday else None
    calendar = [END - dt.timedelta(days=days - 1 - n) for n in range(days)]
    n_decisions = max(1, round(entries * 0.025))
    n_learnings = max(1, round(entries * 0.025))
    n_notes = max(3, entries // 1000)
    n_logs = entries - 2 * (n_decisions + n_learnings) - n_notes
    if n_logs < days:
        raise SystemExit(f"--entries {entries} is too few for --days {days}")

    decisions = _decisions(rng, n_decisions, calendar)
    learnings = _learnings(rng, n_learnings, calendar)
    taken: set[str] = set()
    for specs in (decisions, learnings):
        specs.sort(key=lambda s: s.when)
        for spec in specs:  # supersedes always points back in time, so ids exist already
            spec.id = next_free_id(f"{spec.when.date().isoformat()}-{slugify(spec.title)}", taken)
            taken.add(spec.id)

    init_tree(out)
    (out / "persona.md").write_text(PERSONA, encoding="utf-8")
    for rel, specs, head in (
        (DECISIONS, decisions, "# Decisions\n\n"),
        (LEARNINGS, learnings, "# Learnings\n\n"),
    ):
        text = head + "\n".join(_render(_cold_entry(s)) for s in specs)
        (out / rel).write_text(text, encoding="utf-8")

    # warm logs: the pointers of cold entries, everyday activities, sessions that end
    per_day: dict[dt.date, list[tuple[dt.datetime, str, dict[str, str], str, str, str | None]]] = {
        day: [] for day in calendar
    }
    for spec in decisions + learnings:
        details = {spec.kind: spec.id, "title": spec.title}
        per_day[spec.when.date()].append((spec.when, spec.kind, details, "", "", spec.author))
    base, extra = divmod(n_logs, days)
    for index, day in enumerate(calendar):
        count = base + (1 if index < extra else 0)
        service, _ = rng.choice(SERVICES)
        task = rng.choice(
            [
                f"migrate {service} {rng.choice(COMPONENTS)[0]}",
                f"fix flaky tests in {service}",
                f"review backlog for {service}",
                f"on-call for {service}",
            ]
        )
        moments = sorted(_moment(rng, day) for _ in range(count))
        session_id = f"{day:%Y%m%d}-{slugify(task, 32)}-{index}"
        for number, when in enumerate(moments):
            author = _author(rng)
            if number == len(moments) - 1 and day != calendar[-1]:
                started = moments[0].isoformat()
                details = {
                    "session_id": session_id,
                    "task": task,
                    "started": started,
                    "updated": when.isoformat(),
                }
                body = "**Files modified:**\n- `" + _pkg(service) + "/api.py`"
                per_day[day].append(
                    (when, "session end", details, f"worked on: {task}", body, None)
                )
            elif number % 9 == 4:
                step = rng.choice(
                    [
                        "reproduced the bug",
                        "wrote the failing test",
                        "fix ready for review",
                        "backfill halfway",
                    ]
                )
                per_day[day].append(
                    (when, "progress", {"files": f"src/{_pkg(service)}/api.py"}, step, "", None)
                )
            else:
                subject = rng.choice(SERVICES)[0] if rng.random() < 0.3 else service
                action, details, result, body = _activity(rng, subject)
                if common is not None:
                    prose = common_words.prose(common, subject, [name for name, _ in SERVICES])
                    body = "\n\n".join(part for part in (prose, body) if part)
                per_day[day].append((when, action, details, result, body, author))
    for day, items in per_day.items():
        if not items:
            continue
        items.sort(key=lambda item: item[0])
        rendered = []
        for when, action, details, result, body, author in items:
            entry_id = next_free_id(f"{day.isoformat()}-{slugify(action)}", taken)
            taken.add(entry_id)
            fields = {"author": author} if author else {}
            entry = Entry(
                entry_id,
                "activity",
                "warm",
                action,
                day,
                when.time(),
                fields,
                body=body,
                details=details,
                result=result,
            )
            rendered.append(_render(entry))
        (out / "warm" / f"{day.isoformat()}.md").write_text(
            f"# {day.isoformat()}\n\n" + "\n".join(rendered), encoding="utf-8"
        )
    (out / "warm" / ".gitkeep").unlink(missing_ok=True)

    questions: list[dict[str, object]] = []
    adr_sources = [d for d in decisions if "_new" in d.fields]
    for number in range(n_notes):
        day = rng.choice(calendar)
        source = adr_sources[number % len(adr_sources)] if adr_sources else None
        rel, text, asks = _note(rng, number, day, source)
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        note_id = "note-" + slugify(str(Path(rel).with_suffix("")), limit=120)
        if number >= len(SERVICES):
            asks = []  # a second note about the same service would make the question ambiguous
        questions += [{"q": q, "relevant": [f"{rel}#{note_id}"], "kind": "note"} for q in asks]

    last = calendar[-1]
    start = dt.datetime.combine(last, dt.time(9, 12))
    context = HotContext(
        session_id=f"{last:%Y%m%d}-091200-migrate-billing-retries",
        task="migrate billing retry policy",
        started=start.isoformat(),
        updated=(start + dt.timedelta(hours=3)).isoformat(),
        current_step="dual-write enabled in staging",
        files_modified=["src/billing/tasks.py", "tests/test_billing.py"],
        decisions=[d.id for d in decisions if d.when.date() == last][:3],
        pending_actions=["check the staging error rate tomorrow", "write the rollback note"],
    )
    (out / "hot" / "context.json").write_text(
        json.dumps(context.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "hot" / ".gitkeep").unlink(missing_ok=True)

    for spec in decisions + learnings:
        rel = DECISIONS if spec.kind == "decision" else LEARNINGS
        if spec is not spec.chain[0]:
            continue
        relevant = [f"{rel}#{s.id}" for s in reversed(spec.chain)]
        if spec.kind == "decision" and len(spec.chain) > 1:
            # "what do we use for ..." is answered by the whole chain, newest first
            questions.append({"q": spec.questions[1], "relevant": relevant, "kind": "decision"})
            questions.append(
                {"q": spec.questions[0], "relevant": [relevant[-1]], "kind": "decision"}
            )
            continue
        for question in spec.questions[:2]:
            questions.append({"q": question, "relevant": relevant, "kind": spec.kind})
    rng.shuffle(questions)  # so that the first few hundred lines mix every kind
    return questions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to create (must be absent or empty)")
    parser.add_argument(
        "--entries", type=int, default=20000, help="entries in total (default 20000)"
    )
    parser.add_argument("--days", type=int, default=365, help="days of history (default 365)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=Path, help="write labelled questions here (JSON lines)")
    parser.add_argument(
        "--common-words",
        action="store_true",
        help="spread everyday words (connection, timeout, cache, ...) over most activities",
    )
    args = parser.parse_args(argv)
    questions = build(args.out, args.entries, args.days, args.seed, args.common_words)
    if args.queries:
        args.queries.parent.mkdir(parents=True, exist_ok=True)
        with args.queries.open("w", encoding="utf-8") as handle:
            for item in questions:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(
        f"wrote {args.entries} entries to {args.out}"
        + (f", {len(questions)} questions to {args.queries}" if args.queries else ""),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
