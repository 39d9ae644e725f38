"""Pathological memory text through the site's escaping and markdown renderer (issue 15.10).

    python bench/bench_markup.py [--timeout 60] [--raw]

Each shape (50 KB to 1 MB of one markdown construct repeated or nested) runs in a fresh
process: ``memsite.site.escaping.escape_markdown``, then Python-Markdown with the site's
extensions. Prints the seconds of each step, or RecursionError / TIMEOUT. ``--raw`` skips the
escaping, to see what the renderer alone does with the same text.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

SHAPES = {
    "list markers on one line": lambda: "  - " * 500 + "x",
    "list nested by indentation": lambda: "\n".join("  " * i + "- x" for i in range(500)),
    "ordered list markers": lambda: "1. " * 500 + "x",
    "quote markers": lambda: ">" * 5000 + " x",
    "quotes nested by line": lambda: "\n".join(">" * i + " x" for i in range(2000)),
    "[ then ]": lambda: "[" * 50_000 + "]" * 50_000,
    "unclosed [": lambda: "[a " * 20_000,
    "nested links": lambda: "[" * 3000 + "x" + "](y)" * 3000,
    "unclosed link target": lambda: "[a](" * 20_000,
    "nested parentheses": lambda: "[a](" + "(" * 20_000 + ")" * 20_000,
    "backtick run": lambda: "`" * 20_000,
    "backtick pairs": lambda: "`` a " * 10_000,
    "emphasis run": lambda: "*" * 5000 + "x" + "*" * 5000,
    "nested emphasis": lambda: "*a " * 5000 + "b" + " c*" * 5000,
    "nested strong": lambda: "**a " * 3000 + "b" + " c**" * 3000,
    "nested underscores": lambda: "_a " * 5000 + "b" + " c_" * 5000,
    "< run": lambda: "<" * 100_000,
    "& run": lambda: "&" * 100_000,
    "entities": lambda: "&#91;" * 20_000,
    "backslash escapes": lambda: "\\" * 100_000,
    "nested admonitions": lambda: "\n".join("    " * i + "!!! note" for i in range(300)),
    "nested definition lists": lambda: "\n".join(
        "    " * i + "a\n" + "    " * i + ":   b" for i in range(200)
    ),
    "pipes": lambda: "|" * 50_000,
    "table rows": lambda: "| a |\n|---|\n" + "| x |\n" * 20_000,
    "ATX headings": lambda: "# x\n" * 20_000,
    "setext headings": lambda: "x\n===\n" * 20_000,
    "fence lines": lambda: "```\n" * 5000,
    "unclosed tilde fences": lambda: "~~~x\n" * 5000,
    "comment openers": lambda: "<!--" * 20_000,
    "image openers": lambda: "![" * 20_000,
    "reference definitions": lambda: "[a]: b\n" * 20_000 + "[a]" * 20_000,
    "attribute lists": lambda: "{: .x }" * 20_000,
    "one 1 MB line": lambda: "a" * 1_000_000,
    "1 MB of newlines": lambda: "\n" * 1_000_000,
    "links in one paragraph": lambda: "[a](b) " * 20_000,
}


def measure(name: str, raw: bool) -> None:
    import markdown

    from memsite.site.builder import MARKDOWN_EXTENSIONS
    from memsite.site.escaping import escape_markdown

    names, configs = [], {}
    for extension in MARKDOWN_EXTENSIONS:
        if isinstance(extension, dict):
            ((extension_name, config),) = extension.items()
            names.append(extension_name)
            configs[extension_name] = config
        else:
            names.append(extension)
    text = SHAPES[name]()
    start = time.perf_counter()
    escaped = text if raw else escape_markdown(text)
    escaping = time.perf_counter() - start
    try:
        markdown.markdown(escaped, extensions=names, extension_configs=configs)
        outcome = "ok"
    except RecursionError:
        outcome = "RecursionError"
    rendering = time.perf_counter() - start - escaping
    print(json.dumps([len(text), escaping, rendering, outcome]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--raw", action="store_true", help="no escaping: the renderer alone")
    parser.add_argument("--shape", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.shape:
        measure(args.shape, args.raw)
        return
    print(f"{'shape':28s} {'chars':>9s} {'escape':>8s} {'render':>8s}")
    for name in SHAPES:
        command = [sys.executable, __file__, "--shape", name, *(["--raw"] if args.raw else [])]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"{name:28s} {'':>9s} TIMEOUT (over {args.timeout:.0f} s)", flush=True)
            continue
        if done.returncode:
            print(f"{name:28s} failed: {done.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        size, escaping, rendering, outcome = json.loads(done.stdout)
        extra = "" if outcome == "ok" else f"  {outcome}"
        print(f"{name:28s} {size:9,d} {escaping:7.2f}s {rendering:7.2f}s{extra}", flush=True)


if __name__ == "__main__":
    main()
