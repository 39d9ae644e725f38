"""SVG charts made at build time: no chart library, no JavaScript, a text alternative each.

Colours come from CSS classes (``assets/memsite/memsite.css``) so the charts follow the
light/dark palette.
"""

from __future__ import annotations

import datetime as dt
import html
from collections import Counter
from collections.abc import Iterable

from .render import counted


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def weekly_counts(
    days: Iterable[dt.date], today: dt.date, weeks: int = 12
) -> list[tuple[dt.date, int]]:
    """Entries per week (weeks start on Monday) for the ``weeks`` weeks ending with ``today``."""
    last_monday = today - dt.timedelta(days=today.weekday())
    first = last_monday - dt.timedelta(weeks=weeks - 1)
    counts: Counter[dt.date] = Counter()
    for day in days:
        if first <= day <= today:
            counts[day - dt.timedelta(days=day.weekday())] += 1
    return [
        (first + dt.timedelta(weeks=i), counts[first + dt.timedelta(weeks=i)]) for i in range(weeks)
    ]


def week_chart(weeks: list[tuple[dt.date, int]], chart_id: str = "ms-weeks") -> str:
    """A bar chart of entries per week, as one line of inline SVG inside a figure."""
    width, height, top, bottom = 600, 160, 16, 22
    bar_space = width / max(len(weeks), 1)
    peak = max((count for _, count in weeks), default=0) or 1
    total = sum(count for _, count in weeks)
    summary = (
        f"{counted(total, 'entry', 'entries')} in the {counted(len(weeks), 'week')} from {weeks[0][0]:%d %b %Y}"
        if weeks
        else "No entries"
    )
    desc = "; ".join(f"week of {monday:%d %b}: {count}" for monday, count in weeks)
    parts = [
        f'<svg class="ms-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{chart_id}-t {chart_id}-d" focusable="false">',
        f'<title id="{chart_id}-t">Entries per week, last {len(weeks)} weeks</title>',
        f'<desc id="{chart_id}-d">{_esc(desc)}</desc>',
        f'<line class="ms-axis" x1="0" x2="{width}" y1="{height - bottom}" y2="{height - bottom}"/>',
    ]
    usable = height - top - bottom
    for index, (monday, count) in enumerate(weeks):
        bar = round(usable * count / peak) if count else 0
        x = round(index * bar_space + bar_space * 0.15, 1)
        y = height - bottom - bar
        label = f"Week of {monday:%d %b %Y}: {counted(count, 'entry', 'entries')}"
        parts.append(
            f'<rect class="ms-bar" x="{x}" y="{y}" width="{round(bar_space * 0.7, 1)}" '
            f'height="{max(bar, 1) if count else 0}" rx="2"><title>{_esc(label)}</title></rect>'
        )
        if count:
            parts.append(
                f'<text class="ms-value" x="{round(x + bar_space * 0.35, 1)}" y="{y - 4}" '
                f'text-anchor="middle">{count}</text>'
            )
        if index % 2 == 0:
            parts.append(
                f'<text class="ms-label" x="{round(x + bar_space * 0.35, 1)}" y="{height - 6}" '
                f'text-anchor="middle">{monday:%d %b}</text>'
            )
    parts.append("</svg>")
    caption = f"<figcaption>{_esc(summary)}.</figcaption>"
    return f'<figure class="ms-figure">{"".join(parts)}{caption}</figure>'


def _level(count: int, peak: int) -> int:
    if count == 0:
        return 0
    return min(4, 1 + (4 * (count - 1)) // max(peak, 1))


def heatmap(
    counts: dict[dt.date, int], today: dt.date, weeks: int = 53, chart_id: str = "ms-heat"
) -> str:
    """A calendar heatmap (weeks as columns, Monday to Sunday as rows) ending with ``today``."""
    cell, gap, left, top = 11, 2, 28, 16
    last_monday = today - dt.timedelta(days=today.weekday())
    first = last_monday - dt.timedelta(weeks=weeks - 1)
    width = left + weeks * (cell + gap)
    height = top + 7 * (cell + gap)
    shown = {day: n for day, n in counts.items() if first <= day <= today}
    peak = max(shown.values(), default=0)
    total = sum(shown.values())
    busiest = max(shown.items(), key=lambda item: (item[1], item[0]), default=None)
    summary = f"{counted(total, 'entry', 'entries')} on {counted(len(shown), 'day')} between {first:%d %b %Y} and {today:%d %b %Y}"
    if busiest:
        summary += f"; busiest day {busiest[0]:%d %b %Y} with {busiest[1]}"
    parts = [
        f'<svg class="ms-heatmap" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{chart_id}-t {chart_id}-d" focusable="false">',
        f'<title id="{chart_id}-t">Activity per day</title>',
        f'<desc id="{chart_id}-d">{_esc(summary)}</desc>',
    ]
    for row, name in ((0, "Mon"), (2, "Wed"), (4, "Fri")):
        parts.append(
            f'<text class="ms-label" x="0" y="{top + row * (cell + gap) + cell - 2}">{name}</text>'
        )
    month_seen = None
    for week in range(weeks):
        monday = first + dt.timedelta(weeks=week)
        x = left + week * (cell + gap)
        if monday.month != month_seen and monday.day <= 7:
            parts.append(f'<text class="ms-label" x="{x}" y="10">{monday:%b}</text>')
            month_seen = monday.month
        for row in range(7):
            day = monday + dt.timedelta(days=row)
            if day > today:
                continue
            count = shown.get(day, 0)
            label = f"{day:%a %d %b %Y}: {counted(count, 'entry', 'entries')}"
            parts.append(
                f'<rect class="ms-cell ms-l{_level(count, peak)}" x="{x}" '
                f'y="{top + row * (cell + gap)}" width="{cell}" height="{cell}" rx="2">'
                f"<title>{_esc(label)}</title></rect>"
            )
    parts.append("</svg>")
    caption = f"<figcaption>{_esc(summary)}.</figcaption>"
    return f'<figure class="ms-figure ms-figure--wide">{"".join(parts)}{caption}</figure>'
