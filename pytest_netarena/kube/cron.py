"""Cron schedules as a CronJob's `schedule` writes them: five fields (or @hourly...), the times they name, in a zone.

Minute, hour, day of month, month, day of week; `*`, lists, ranges, steps (`*/15`, `1-30/5`), month and
day names; day 7 is Sunday too; when both day fields are restricted a time matching either is in the
schedule (cron's rule, which robfig/cron that Kubernetes uses follows). ValueError for what does not read.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
          "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
MONTHS = {name: i + 1 for i, name in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                                "nov", "dec"))}
DAYS = {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
#: the farthest a next time is looked for (a schedule like "0 0 30 2 *" never comes)
HORIZON = dt.timedelta(days=366 * 5)


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool  #: the day-of-month field is *
    any_weekday: bool  #: the day-of-week field is *

    def matches(self, when: dt.datetime) -> bool:
        if when.minute not in self.minutes or when.hour not in self.hours or when.month not in self.months:
            return False
        return self._day(when)

    def _day(self, when: dt.datetime) -> bool:
        day, weekday = when.day in self.days, (when.weekday() + 1) % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return day and weekday
        return day or weekday

    def next_after(self, when: dt.datetime) -> dt.datetime | None:
        """The first scheduled time strictly after `when` (an aware datetime), or None within the horizon."""
        tz = when.tzinfo
        local = when.astimezone(tz).replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
        end = when + HORIZON
        while local <= end:
            if local.month not in self.months:
                local = (local.replace(day=1, hour=0, minute=0) + dt.timedelta(days=32)).replace(day=1)
                continue
            if not self._day(local):
                local = local.replace(hour=0, minute=0) + dt.timedelta(days=1)
                continue
            if local.hour not in self.hours:
                local = local.replace(minute=0) + dt.timedelta(hours=1)
                continue
            if local.minute not in self.minutes:
                local += dt.timedelta(minutes=1)
                continue
            return local
        return None

    def last_between(self, start: dt.datetime, end: dt.datetime) -> tuple[dt.datetime | None, int]:
        """(the latest scheduled time in (start, end], how many there were, counted up to 100)."""
        found, count, when = None, 0, start
        while True:
            when = self.next_after(when)
            if when is None or when > end:
                return found, count
            found, count = when, count + 1
            if count >= 100:  # enough to say many were missed; jump to the latest one
                while True:
                    later = self.next_after(found)
                    if later is None or later > end:
                        return found, count
                    found = later


def _values(field: str, low: int, high: int, names: dict[str, int]) -> frozenset[int]:
    found: set[int] = set()
    for part in field.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if step <= 0:
            raise ValueError(f"invalid step in {part!r}")
        if body in ("*", "?"):
            first, last = low, high
        else:
            first_text, dash, last_text = body.partition("-")
            first = _number(first_text, names)
            last = _number(last_text, names) if dash else (high if step_text else first)
        if not low <= first <= high or not low <= last <= high or first > last:
            raise ValueError(f"{part!r} is out of range {low}-{high}")
        found.update(range(first, last + 1, step))
    return frozenset(found)


def _number(text: str, names: dict[str, int]) -> int:
    lowered = text.lower()
    if lowered in names:
        return names[lowered]
    if not text.isdigit():
        raise ValueError(f"{text!r} is not a number")
    return int(text)


def parse(text: str) -> Schedule:
    """A schedule; ValueError (with why) for one that does not read."""
    text = text.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        raise ValueError("the time zone belongs in spec.timeZone")
    fields = MACROS.get(text.lower(), text).split()
    if len(fields) != 5:
        raise ValueError(f"expected exactly 5 fields, found {len(fields)}: {text}")
    minute, hour, day, month, weekday = fields
    weekdays = frozenset(d % 7 for d in _values(weekday, 0, 7, DAYS))
    return Schedule(_values(minute, 0, 59, {}), _values(hour, 0, 23, {}), _values(day, 1, 31, {}),
                    _values(month, 1, 12, MONTHS), weekdays, day in ("*", "?"), weekday in ("*", "?"))


def zone(name: str | None) -> dt.tzinfo:
    """spec.timeZone (an IANA name), UTC when unset; ValueError for an unknown one."""
    if not name:
        return dt.UTC
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name}") from None
