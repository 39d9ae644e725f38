"""Everyday words in every corner of a generated memory, and questions made of them.

``bench/corpus.py --common-words`` adds a sentence or two of the prose below to most day-log
activities, so words like "connection", "timeout", "cache" and "migration" each occur in
thousands of entries, as they do in a real team's memory after a year: a question made of
them matches a large share of the index, which is where a search engine that scores every
match slows down (issue 16, point 4). :data:`QUESTIONS` are such questions, for speed.

The prose comes from its own random stream, so the tree holds the same entries with and
without the option (the labelled questions still hold); only activity bodies grow.
"""

from __future__ import annotations

import random

WORDS = (
    "connection",
    "timeout",
    "cache",
    "migration",
    "error",
    "retry",
    "queue",
    "database",
    "latency",
    "request",
    "worker",
    "deploy",
    "config",
    "lock",
)

SHARE = 0.75  # activities that get prose
SECOND = 0.3  # of those, the ones that get a second sentence

# {svc}: the activity's service; {dep}: another one; {n}, {a}, {b}, {p}: numbers
SENTENCES = (
    "Saw connection timeouts from {svc} to the database while the migration ran; "
    "they stopped after {n} minutes.",
    "The cache hit rate of {svc} fell to {p}% after the deploy, so requests went to the database.",
    "The {svc} worker queue backed up to {n} jobs; the retry loop kept putting the same "
    "error back.",
    "Raised the {svc} connection pool timeout from {a} s to {b} s for the migration window.",
    "Latency of {svc} requests rose {p}% while the cache warmed up after the deploy.",
    "The {svc} error log shows {n} timeouts on the connection to {dep}, none since the retry fix.",
    "Migration {n} for {svc} adds an index; the deploy waited on a database lock for {a} s.",
    "Cleared the {svc} cache by hand after a stale config made requests fail with an error.",
    "Queue consumers in {svc} hit the timeout and retried; the error rate stayed under {p}%.",
    "The {svc} cache key has no tenant in it, so the next migration could serve stale rows.",
    "Workers of {svc} held a database connection during the whole request; fixed to release "
    "it early.",
    "Config for {svc} now sets the request timeout to {a} s and three retries with backoff.",
    "Deploy of {svc} paused: the migration lock on the jobs table blocked the queue workers.",
    "Connection resets between {svc} and {dep} under load; latency p99 went to {n} ms.",
    "Retried the failed {svc} migration with a lock timeout of {a} s; it went through.",
    "The {svc} request queue grows when {dep} is slow; the timeout keeps workers from piling up.",
    "Moved the {svc} session cache to its own database to cut lock waits on deploy.",
    "Error budget of {svc} burned {p}% this week, mostly connection errors during the deploy.",
    "Checked the {svc} config: the cache TTL is {a} minutes and the queue retry limit is {b}.",
    "A slow database query in {svc} held a lock for {a} s and made {n} requests time out.",
    "Worker memory of {svc} climbs while the cache fills; restarts after each deploy hide it.",
    "The {svc} migration runbook now says to drain the queue and pause workers first.",
    "Latency alerts for {svc} fired after a config change that shrank the connection pool.",
    "{dep} returned errors for {n} requests from {svc}; our retry made it worse until the "
    "timeout was lowered.",
    "Added a cache in front of the {svc} database lookups; latency dropped from {a} to {b} ms.",
    "Deploy of {svc} rolled back: the new config pointed workers at the old queue.",
    "Lock contention on the {svc} database during the migration; moved it to a quiet hour.",
    "The {svc} connection to {dep} has no timeout; a hung request ties up a worker for good.",
    "Request retries from {svc} double the load on {dep} when it already has errors.",
    "Cache stampede in {svc} after the deploy: {n} requests missed at once and hit the database.",
    "Queue latency of {svc} is {a} s at p95; the workers spend most of it waiting on a lock.",
    "Noted the {svc} migration order: config first, then the database, then the cache flush.",
    "Timeouts on the {svc} health check came from a database connection limit, not the deploy.",
    "The {svc} worker retries each error {b} times; the dead-letter queue holds the rest.",
    "Dropped the {svc} request cache for admin users; it served a stale config after the deploy.",
    "Migration dry run for {svc} took {a} minutes against a copy of the production database.",
)

_FIXED_QUESTIONS = (
    "why do database connections time out during a migration",
    "cache errors after a deploy",
    "what did we do about the queue backlog and the retries",
    "connection timeout to the database",
    "which migration held a lock on the database",
    "request latency went up after the cache was cleared",
    "how do workers retry failed queue jobs",
    "connection pool too small during the deploy",
    "timeout errors from the worker queue",
    "stale cache rows after a migration",
    "config change that made requests fail",
    "retries made things worse after connection errors",
    "why is latency high while the cache is cold",
    "database lock timeout during a deploy",
    "workers stuck waiting on a database connection",
    "queue latency after the worker config change",
    "error rate after the migration was deployed",
    "requests failing with connection reset errors",
    "cache invalidation on deploy",
    "how long is the request timeout and how many retries",
    "lock contention in the database while migrating",
    "what is the cache TTL in the config",
    "worker memory grows as the cache fills",
    "slow database query made requests time out",
    "migration order of config, database and cache",
    "dead-letter queue for errors the worker gave up on",
    "health check timeouts and the connection limit",
    "deploy rolled back because of a queue config",
    "connection errors burned the error budget",
    "cache stampede that hit the database",
)
_SERVICE_QUESTIONS = (
    "connection timeouts in the {alias}",
    "{alias} cache after the deploy",
    "{alias} migration lock on the database",
    "{alias} queue retries and errors",
    "request latency of the {alias}",
    "{alias} worker config and timeout",
)


def prose(rng: random.Random, service: str, services: list[str]) -> str:
    """One or two sentences of everyday work on ``service`` (or nothing, for a quarter)."""
    if rng.random() >= SHARE:
        return ""
    count = 2 if rng.random() < SECOND else 1
    others = [name for name in services if name != service]
    sentences = []
    for template in rng.sample(SENTENCES, count):
        text = template.format(
            svc=service,
            dep=rng.choice(others),
            n=rng.randrange(2, 900),
            a=rng.randrange(2, 60),
            b=rng.randrange(60, 400),
            p=rng.randrange(3, 60),
        )
        sentences.append(text[0].upper() + text[1:])
    return " ".join(sentences)


def questions(services: list[tuple[str, list[str]]], seed: int = 1) -> list[str]:
    """Natural questions made of the everyday words: 30 general ones, then 30 that name a
    service by one of the ways people refer to it."""
    rng = random.Random(seed)
    asked = list(_FIXED_QUESTIONS)
    for number in range(30):
        _, aliases = services[number % len(services)]
        template = _SERVICE_QUESTIONS[number % len(_SERVICE_QUESTIONS)]
        asked.append(template.format(alias=rng.choice(aliases)))
    return asked
