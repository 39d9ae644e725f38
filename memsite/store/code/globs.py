"""The globs of the ``Paths`` field (issue 22): parsed by hand, matched without backtracking.

A glob is matched against a whole path. ``*`` is any run of characters within one folder and
``?`` one character but ``/``; ``**`` is any run of characters across folders, ``**/`` any
number of whole folders (none included) and ``/**`` at the end the folder itself or anything
under it; ``[...]`` is one character of a set, in which ``a-z`` is a range, a ``]`` right
after the ``[`` is a member and a ``!`` or ``^`` first makes it any character but those (``/``
included); every other character, ``\\`` too, is itself. That is what the regular expression
memsite used to translate a glob into meant, so a stored glob keeps its meaning.

Three globs are refused, with :class:`InvalidInput` naming the fix: a ``[`` that no ``]``
closes (the translation read it as a literal ``[``: ``[[]`` is one), a negated class with no
member (``[!]``, so ``[!]x]`` too: the ``]`` right after ``[!`` closes it) and a reversed range
(``[z-a]``). The translation crashed every reader on the last two.

A glob compiles to a position automaton whose states are the bits of two integers; a path is
read once, one character at a time, with a few integer operations per character however
many wildcards the glob holds. The translation backtracked: ``src/**a**a…b`` (12 ``**a``) took
92 s on a 40-character path.
"""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field

from ...errors import InvalidInput

# a token of a glob: one of these kinds, with the character of a literal or the set of a class
LITERAL, ONE, SET, STAR, ANY, FOLDERS, BELOW = range(7)
_SINGLE = (LITERAL, ONE, SET)  # the kinds that take exactly one character


@dataclass(frozen=True)
class CharacterSet:
    """The set of a ``[...]``: ranges of code points (a single member is a range of one)."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool


Token = tuple[int, "str | CharacterSet | None"]


@dataclass(frozen=True, eq=False)
class Glob:
    """A compiled glob: :meth:`matches` reads a path once.

    Bit ``k`` of a state stands for "the first ``k`` tokens have matched", so the bit above
    the last token is the whole glob. A ``**/`` or ``/**`` token needs a second state
    ("inside it, after a character that was not its ``/``"): the same bit of a second
    integer. The masks say which tokens are of which kind.
    """

    final: int
    prefix: str  # the literal text before the first wildcard: every match starts with it
    suffix: str  # the literal text after the last wildcard: every match ends with it
    shortest: int  # the fewest characters a match has
    start: int  # the state after the prefix
    literals: dict[str, int]
    one: int
    # the classes, by stretches of code points: from ``bounds[i]`` on (up to the next
    # bound), the classes holding a character are ``holding[i]``; below the first, the
    # negated ones
    bounds: tuple[int, ...]
    holding: tuple[int, ...]
    negated: int
    star: int
    any: int
    folders: int
    below: int
    runs: tuple[int, int, int]  # the masks of `_close`
    _steps: dict[str, int] = field(default_factory=dict, repr=False)

    def matches(self, path: str) -> bool:
        """Whether the glob matches the whole of ``path``."""
        if (
            len(path) < self.shortest
            or not path.startswith(self.prefix)
            or not path.endswith(self.suffix)
        ):
            return False
        star_or_any = self.star | self.any
        state, inside = self.start, 0
        for char in path[len(self.prefix) :]:
            step = self._steps.get(char)
            if step is None:
                step = self._step(char)
            reached = (state & step) << 1
            if char == "/":
                reached |= (state & self.any) | ((state | inside) & self.folders)
                inside = (state | inside) & self.below
            else:
                reached |= state & star_or_any
                inside = ((state | inside) & self.folders) | (inside & self.below)
            # past the "/" of a final "/**", the glob has matched
            state = _close(reached | ((inside & self.below) << 1), self.runs)
            if not (state | inside):
                return False
        return bool(state & self.final)

    def _step(self, char: str) -> int:
        """The tokens that take ``char`` as their one character."""
        step = self.literals.get(char, 0) | (self.one if char != "/" else 0)
        stretch = bisect.bisect_right(self.bounds, ord(char)) - 1
        step |= self.holding[stretch] if stretch >= 0 else self.negated
        self._steps[char] = step
        return step


def _close(state: int, runs: tuple[int, int, int]) -> int:
    """``state`` with the empty moves made: from an active token of a run of wildcards (each
    may match nothing) to every later token of the run and to the token after it.

    ``runs`` holds the first bit of each run, the bit after each run, and the bits an empty
    move can reach. In each run, subtracting its first bit borrows up to its lowest active
    bit ``p`` (the bit after the run is set in ``ended``, so no borrow leaves the run), and
    ``~(ended - starts) ^ ended`` is 1 exactly above ``p``: masked, the tokens reached.
    """
    starts, after, reached = runs
    if not starts:
        return state
    ended = state | after
    return state | (reached & (~(ended - starts) ^ ended))


def compile(pattern: str) -> Glob:
    """``pattern`` compiled (cached); ``InvalidInput`` naming the fix when it is one of the
    globs this module refuses."""
    compiled = _compiled(pattern)
    if isinstance(compiled, str):
        raise InvalidInput(f"glob {pattern!r} {compiled}")
    return compiled


def problem(pattern: str) -> str | None:
    """Why ``pattern`` is refused (``has …; fix``), or None when it compiles."""
    compiled = _compiled(pattern)
    return compiled if isinstance(compiled, str) else None


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Glob | str:
    # the refusal is cached too: every reader asks about every glob of the tree on each call
    try:
        tokens = _tokens(pattern)
    except _Refused as refused:
        return str(refused)
    return _automaton(tokens)


class _Refused(Exception):
    """Why a glob is refused, as ``has …; fix``."""


def _tokens(pattern: str) -> list[Token]:
    out: list[Token] = []
    i, size = 0, len(pattern)
    while i < size:
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append((FOLDERS, None))
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == size:
            out.append((BELOW, None))
            i += 3
        elif pattern.startswith("**", i):
            out.append((ANY, None))
            i += 2
        elif char == "*":
            out.append((STAR, None))
            i += 1
        elif char == "?":
            out.append((ONE, None))
            i += 1
        elif char == "[":
            members, i = _character_set(pattern, i)
            out.append((SET, members))
        else:
            out.append((LITERAL, char))
            i += 1
    return out


def _character_set(pattern: str, start: int) -> tuple[CharacterSet, int]:
    """The ``[...]`` opening at ``start``, and the index after its ``]``."""
    negated = pattern[start + 1 : start + 2] in ("!", "^")
    first = start + 2 if negated else start + 1
    # the first "]" after the character that follows "[" closes it
    end = pattern.find("]", start + 2)
    if end < 0:
        raise _Refused(
            f"has an unclosed '[' (character {start + 1}); close it with ']', "
            "or write '[[]' for a literal '['"
        )
    text = pattern[first:end]
    if not text:
        opened = pattern[start : start + 2]
        raise _Refused(
            f"has the empty class '{opened}]' (a ']' right after '[!' or '[^' closes it); "
            f"name a character in it, as in '{opened}x]'"
        )
    ranges = []
    k = 0
    while k < len(text):
        low = text[k]
        if k + 2 < len(text) and text[k + 1] == "-":
            high = text[k + 2]
            if high < low:
                whole = pattern[start : end + 1]
                at = first - start + k
                fixed = f"{whole[:at]}{high}-{low}{whole[at + 3 :]}"
                raise _Refused(
                    f"has the reversed range '{low}-{high}' in '{whole}'; "
                    f"write it low to high: '{fixed}'"
                )
            ranges.append((ord(low), ord(high)))
            k += 3
        else:
            ranges.append((ord(low), ord(low)))  # a "-" first or last is itself
            k += 1
    return CharacterSet(tuple(ranges), negated), end + 1


def _automaton(tokens: list[Token]) -> Glob:
    literals: dict[str, int] = {}
    sets: dict[CharacterSet, int] = {}
    masks = dict.fromkeys((ONE, STAR, ANY, FOLDERS, BELOW), 0)
    for k, (kind, value) in enumerate(tokens):
        if isinstance(value, str):
            literals[value] = literals.get(value, 0) | 1 << k
        elif isinstance(value, CharacterSet):
            sets[value] = sets.get(value, 0) | 1 << k
        else:
            masks[kind] |= 1 << k
    starts = after = reached = 0
    k = 0
    while k < len(tokens):
        if tokens[k][0] in _SINGLE:
            k += 1
            continue
        first = k
        while k < len(tokens) and tokens[k][0] not in _SINGLE:
            k += 1
        starts |= 1 << first
        after |= 1 << k
        reached |= ((1 << (k + 1)) - 1) ^ ((1 << (first + 1)) - 1)
    bounds, holding, negated = _stretches(sets)
    lead = next((k for k, (kind, _) in enumerate(tokens) if kind != LITERAL), len(tokens))
    last = next((k for k in range(len(tokens), 0, -1) if tokens[k - 1][0] != LITERAL), 0)
    runs = (starts, after, reached)
    return Glob(
        final=1 << len(tokens),
        prefix="".join(str(value) for _, value in tokens[:lead]),
        suffix="".join(str(value) for _, value in tokens[last:]) if lead < len(tokens) else "",
        shortest=sum(1 for kind, _ in tokens if kind in _SINGLE),
        start=_close(1 << lead, runs),
        literals=literals,
        one=masks[ONE],
        bounds=bounds,
        holding=holding,
        negated=negated,
        star=masks[STAR],
        any=masks[ANY],
        folders=masks[FOLDERS],
        below=masks[BELOW],
        runs=runs,
    )


def _stretches(sets: dict[CharacterSet, int]) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The code points where the classes holding a character change, and those classes (as
    token bits) from each on: one sweep over the ranges' ends, so that a character costs a
    binary search, not a test of every class (a glob may hold thousands)."""
    changes: dict[int, list[tuple[int, int]]] = {}
    for index, members in enumerate(sets):
        for low, high in members.ranges:
            changes.setdefault(low, []).append((index, 1))
            changes.setdefault(high + 1, []).append((index, -1))
    bits = list(sets.values())
    negated = 0
    for members, bit in sets.items():
        if members.negated:
            negated |= bit
    inside = [0] * len(bits)  # how many ranges of each class hold the current point
    holding, bounds, mask = [], sorted(changes), negated
    for point in bounds:
        for index, delta in changes[point]:
            was = inside[index] > 0
            inside[index] += delta
            if (inside[index] > 0) != was:
                mask ^= bits[index]
        holding.append(mask)
    return tuple(bounds), tuple(holding), negated
