"""How often a new decision's notice names the decision it replaces (issue 27).

For each ADR corpus of ``../shared/devset`` (its README lists them), a scratch repository
holds the records in place (``records/``, named in ``[records]`` of ``memory/memsite.toml``).
Every known supersession pair the records parser finds (``memsite.store.records``: a
"superseded by" or "supersedes" link) is replayed: the newer record (and any other record
that replaces the older one) is left out of the folder, so the older one is current, and the
newer's title and reasons (its body, cut to 2,000 characters) are written with
``Memory.decide``; the pair counts as named when the decision's ``may_supersede`` holds the
older record. Thirty decisions about nothing the corpora hold (written for this bench) are
then written into each corpus, and each one given any notice is a false notice.

Pairs are split into tuning and held-out halves by a hash of their ids; ``--sweep`` prints,
for the tuning half, how many pairs and unrelated decisions each topic bar would name (the
bars of ``memsite.search.notices`` were chosen from it); the figures of the held-out half
are the ones docs/benchmarks.md reports::

    python bench/bench_notices.py [--devset ../shared/devset] [--sweep]

The project's tests never read ``../shared``; this script is how the notice rule is tuned.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import tempfile
from pathlib import Path

from bench_devset import ADR_FOLDERS  # the record folder of each ADR corpus

from memsite import Memory
from memsite.search import notices
from memsite.store import tree
from memsite.store.records import read_records

REPO = Path(__file__).resolve().parent.parent
WHY_CHARS = 2000
# Pairs the devset's README names that no record links ("reversed", "revisit"): the older
# file, the newer file. A rejected or proposed older record (cloud-platform 018 -> 019,
# zooniverse 3 -> 21) is left out: a notice names current decisions only.
README_PAIRS = {
    "ministryofjustice__cloud-platform": [
        ("012-One-cluster-for-dev-staging-prod.md", "021-Multi-cluster.md")
    ],
    "zooniverse__front-end-monorepo": [
        ("adr-11.md", "adr-56.md"),
        ("adr-46.md", "adr-49.md"),
        ("adr-28.md", "adr-48.md"),
    ],
}

# Decisions of a web shop's application team, on questions none of the corpora decide.
UNRELATED = [
    ("Round invoice totals half-even to the cent", "Accountants expect banker's rounding."),
    ("Store prices as integer cents, never floats", "Float sums drifted by a cent on refunds."),
    ("Send order confirmation emails from a queue", "Checkout waited on the mail provider."),
    ("Show prices including VAT in the basket", "Consumer law requires the full price."),
    ("Keep the product search box on every page", "Half the sessions start with a search."),
    (
        "Use ISO 4217 codes for every stored currency",
        "Symbols are ambiguous: $ is four currencies.",
    ),
    ("Let guests check out without an account", "Forced sign-up lost a fifth of orders."),
    ("Generate PDF invoices on demand, not at checkout", "Most invoices are never opened."),
    ("Translate UI strings with gettext catalogues", "Translators already know the po format."),
    ("Limit a basket to 99 units of one product", "Bulk buyers should go through sales."),
    ("Give each order a short human-readable number", "Support misread the long UUIDs on calls."),
    ("Export orders to the accountants as CSV", "Their tool imports nothing else."),
    ("Apply discount codes before tax, not after", "That is what the tax office requires."),
    ("Keep abandoned baskets for 30 days", "Returning shoppers expect their items back."),
    ("Show stock as in stock or low, never a count", "Exact counts were scraped by a competitor."),
    (
        "Sort search results by relevance, then price",
        "Price-first buried the products people meant.",
    ),
    ("Resize product photos when they are uploaded", "Resizing per request slowed product pages."),
    ("Write dates in the shop as 2 March 2026", "Numeric dates confused customers abroad."),
    ("Accept returns within 30 days of delivery", "The law gives 14; 30 cut support tickets."),
    ("Use a modal for the cookie consent banner", "The bar was ignored and consent not recorded."),
    ("Ask for the delivery address before payment", "Shipping cost depends on the address."),
    ("Offer gift wrapping only for single items", "Wrapping mixed parcels took too long."),
    ("Send a review request a week after delivery", "Sooner and most parcels had not arrived."),
    ("Cap free shipping at orders over 50 euros", "Small orders lost money on postage."),
    ("Keep customer wishlists private by default", "Shared lists surprised people in a survey."),
    ("Show delivery estimates as a date range", "Single dates were missed and drew complaints."),
    ("Name product variants by colour, then size", "That is the order customers choose in."),
    ("Require a phone number only for courier delivery", "Couriers call; the post does not."),
    ("Hide out-of-season products from the home page", "Winter coats in July looked neglected."),
    ("Refund to the original payment method only", "Store credit refunds broke card rules."),
]


def pairs_of(entries: list, corpus: str = "") -> list[tuple[str, str]]:
    """(older, newer) for every supersession link the records parser found, and the pairs
    of ``README_PAIRS`` for ``corpus``."""
    named = {Path(e.path).name: e.id for e in entries}
    found = {(named[old], named[new]) for old, new in README_PAIRS.get(corpus, [])}
    ids = {e.id for e in entries}
    for entry in entries:
        newer = entry.fields.get("superseded-by", "").strip()
        if newer in ids:
            found.add((entry.id, newer))
        older = (entry.supersedes or "").strip()
        if older in ids:
            found.add((older, entry.id))
    return sorted(found)


def held_out(corpus: str, pair: tuple[str, ...]) -> bool:
    """Whether a pair (or an unrelated decision) is held out from tuning: by a hash."""
    digest = hashlib.sha1(":".join((corpus, *pair)).encode()).digest()
    return digest[0] % 2 == 1


# How a record says it was replaced, taken out of the older record of a replayed pair so that
# the tree holds it as it was before the newer one was written.
_REPLACED_TITLE = re.compile(r"\[Superseded by \[[^\]]*\]\([^)]*\)\]\s*")
_REPLACED = re.compile(r"(?:⌛️?\s*)?superseded(?:\s+by)?(?:\s*\[[^\]]*\]\([^)]*\))?", re.I)


def as_before(text: str) -> str:
    """The text of a record before a newer one superseded it."""
    return _REPLACED.sub("Accepted", _REPLACED_TITLE.sub("", text))


def scratch_tree(base: Path, files: list[Path], before: str = "") -> Path:
    """A scratch repository with ``files`` as its records (the one named ``before`` as it
    was before it was superseded); returns the memory tree."""
    if base.exists():
        shutil.rmtree(base)
    (base / ".git").mkdir(parents=True)
    (base / "records").mkdir()
    for path in files:
        text = path.read_text("utf-8")
        text = as_before(text) if path.name == before else text
        (base / "records" / path.name).write_text(text, "utf-8")
    root = base / "memory"
    tree.init_tree(root)
    (root / "memsite.toml").write_text('[records]\npaths = ["../records"]\n', "utf-8")
    return root


def replay(corpus: str, devset: Path, scratch: Path) -> dict[str, list]:
    folder = devset / corpus / "memory" / "notes" / ADR_FOLDERS[corpus]
    files = sorted(folder.glob("*.md"))
    full = read_records(scratch_tree(scratch / "full", files)).entries
    by_id = {e.id: e for e in full}
    rows: dict[str, list] = {"pairs": [], "unrelated": []}
    for older, newer in pairs_of(full, corpus):
        replacing = {n for o, n in pairs_of(full, corpus) if o == older} | {newer}
        kept = [p for p in files if by_id_of(p, full) not in replacing]
        record, old = by_id[newer], by_id[older]
        root = scratch_tree(scratch / "pair", kept, before=Path(old.path).name)
        memory = Memory(root, allow_secrets=True, notify=lambda _m: None)
        why = record.body.strip()[:WHY_CHARS] or record.title
        written = memory.decide(record.title, why, at=str(record.date))
        named = [n.id for n in written.may_supersede]
        score = _score(root, record.title, why, older)
        split = "held-out" if held_out(corpus, (older, newer)) else "tuning"
        rows["pairs"].append((split, older, newer, older in named, len(named), score))
    root = scratch_tree(scratch / "unrelated", files)
    for title, why in UNRELATED:
        memory = Memory(root, notify=lambda _m: None)
        best = max(_scores(root, title, why), default=0.0)
        written = memory.decide(title, why)
        split = "held-out" if held_out(corpus, (title,)) else "tuning"
        rows["unrelated"].append((split, title, len(written.may_supersede), best))
        # each unrelated decision is written alone, as the only one of the tree
        (root / "cold" / "decisions.md").write_text("# Decisions\n", "utf-8")
    return rows


def by_id_of(path: Path, entries: list) -> str | None:
    for entry in entries:
        if Path(entry.path).name == path.name:
            return entry.id
    return None


def _scores(root: Path, title: str, why: str) -> list[float]:
    decisions = notices.current(root, "decision")
    terms = [notices.entry_terms(e) for e in decisions]
    return notices.cosines(notices.new_terms(title, why), terms)


def _score(root: Path, title: str, why: str, target: str) -> float:
    decisions = notices.current(root, "decision")
    terms = [notices.entry_terms(e) for e in decisions]
    scores = notices.cosines(notices.new_terms(title, why), terms)
    return next((s for e, s in zip(decisions, scores, strict=True) if e.id == target), 0.0)


def sample_learnings() -> None:
    """The bar of ``repeats`` on the bundled sample: each learning written again (its title,
    why and tags) against the others, which it does not repeat, and the bcrypt lesson said
    again against all of them."""
    root = REPO / "memory"
    learnings = notices.current(root, "learning")
    closest = []
    for i, entry in enumerate(learnings):
        others = learnings[:i] + learnings[i + 1 :]
        asked = notices.new_terms(entry.title, entry.why, entry.tags)
        have = [notices.entry_terms(e) for e in others]
        closest.append(max(notices.cosines(asked, have, notices.BACKGROUND)))
    again = notices.new_terms("bcrypt cuts passwords off at 72 bytes", None)
    have = [notices.entry_terms(e) for e in learnings]
    scores = sorted(notices.cosines(again, have, notices.BACKGROUND))
    print(
        f"sample learnings: the closest other learning of each of {len(learnings)} scores at "
        f"most {max(closest):.2f}; the bcrypt lesson said again scores {scores[-1]:.2f} "
        f"(next {scores[-2]:.2f}); repeat bar {notices.REPEAT:.2f}"
    )


def small_memory() -> None:
    """An hour-old memory (issue 36): one lesson written again with its why word for word
    under a reworded title, and a decision sharing one word with the one before it (in the
    sample too, where that word is rare)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        tree.init_tree(root)
        memory = Memory(root, author="", notify=lambda _m: None)
        why = "0.1 * 3 gave 0.30000000000000004 and a refund was a cent short."
        memory.learn("Float multiply loses cents", why=why, category="bug")
        memory.learn("Use Decimal for money", why="Floats drift.", category="bug")
        again = memory.learn("Floats lose cents when multiplied", why=why, category="bug")
        memory.decide("Hash admin passwords with scrypt too", "Admins can read every order.")
        told = memory.decide("Use Tailwind for the admin UI", "Utility classes, no design system.")
        print(
            f"hour-old memory: the reworded lesson repeats "
            f"{again.repeats.id if again.repeats else 'nothing'}; the Tailwind decision is "
            f"given {len(told.may_supersede)} notice(s)"
        )
        sample = Path(tmp) / "sample"
        shutil.copytree(REPO / "memory", sample)
        memory = Memory(sample, author="", notify=lambda _m: None)
        memory.decide("Hash admin passwords with scrypt too", "Admins can read every order.")
        told = memory.decide("Use Tailwind for the admin UI", "Utility classes, no design system.")
        print(f"sample: the Tailwind decision is given {len(told.may_supersede)} notice(s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devset", type=Path, default=REPO.parent / "shared" / "devset")
    parser.add_argument("--sweep", action="store_true", help="Print the tuning sweep too.")
    args = parser.parse_args()
    pairs, unrelated = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in ADR_FOLDERS:
            rows = replay(corpus, args.devset, Path(tmp) / corpus)
            pairs += [(corpus, *row) for row in rows["pairs"]]
            unrelated += [(corpus, *row) for row in rows["unrelated"]]
            for split, older, newer, hit, count, score in rows["pairs"]:
                mark = "named" if hit else "MISSED"
                print(f"{corpus:44} {split:8} {older} <- {newer}: {mark} ({count}, {score:.2f})")
    for split in ("tuning", "held-out"):
        chosen = [p for p in pairs if p[1] == split]
        named = sum(p[4] for p in chosen)
        extra = sum(p[5] - p[4] for p in chosen)
        apart = [u for u in unrelated if u[1] == split]
        false = sum(1 for u in apart if u[3])
        print(
            f"{split}: {named}/{len(chosen)} pairs named ({named / len(chosen):.0%}), "
            f"{extra} other record(s) named beside them; unrelated: {false}/{len(apart)} "
            f"given a notice ({false / len(apart):.1%})"
        )
    sample_learnings()
    small_memory()
    if args.sweep:
        tuning = [p for p in pairs if p[1] == "tuning"]
        apart = [u for u in unrelated if u[1] == "tuning"]
        for step in range(8, 31):
            bar = step / 100
            named = sum(p[6] >= bar for p in tuning)
            noisy = sum(u[4] >= bar for u in apart)
            print(f"bar {bar:.2f}: tuning {named}/{len(tuning)} named, {noisy} unrelated noticed")


if __name__ == "__main__":
    main()
