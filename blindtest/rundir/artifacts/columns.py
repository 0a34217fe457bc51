"""A long list of small JSON objects held by column (a design's arrangement and prompts in a
long run), reading back as the dicts appended.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from blindtest.rundir.artifacts.encoding import JsonObject

#: A column keeps a table of its distinct values while it has at most this many.
_INTERN_MAX = 256


class _Column:
    """One key of a list of JSON objects: a code per entry (-1: key absent) into a table of
    values; a value that repeats is held once while the column has few distinct values."""

    __slots__ = ("_seen", "codes", "values")

    def __init__(self) -> None:
        self.codes = array("i")
        self.values: list[Any] = []
        self._seen: dict[Any, int] | None = {}

    def set(self, position: int, value: Any) -> None:
        if len(self.codes) < position:
            self.codes.extend(array("i", [-1]) * (position - len(self.codes)))
        seen = self._seen
        if seen is not None and (value is None or type(value) in (str, int, float, bool)):
            key = (type(value), value)
            code = seen.get(key)
            if code is None:
                code = seen[key] = len(self.values)
                self.values.append(value)
                if len(seen) > _INTERN_MAX:
                    self._seen = None  # many distinct values: no table, one value per entry
            self.codes.append(code)
            return
        self.codes.append(len(self.values))
        self.values.append(value)


class Columns(Sequence[JsonObject]):
    """A long list of small JSON objects (a design's arrangement or prompts) held by column.

    Reads back as a list of dicts equal to the ones appended (a fresh dict per access, keys in
    sorted order, as ``dump_json`` writes them): at 30,000 trials this holds a few dozen bytes
    per entry besides its strings, where a list of dicts holds several hundred."""

    def __init__(self, entries: Iterable[Mapping[str, Any]] = ()) -> None:
        self._size = 0
        self._by_key: dict[str, _Column] = {}
        self._columns: list[tuple[str, _Column]] = []
        self._index: dict[str, dict[Any, int]] = {}
        for entry in entries:
            self.append(entry)

    def append(self, entry: Mapping[str, Any]) -> None:
        for key, value in entry.items():
            column = self._by_key.get(key)
            if column is None:
                column = self._by_key[key] = _Column()
                self._columns = sorted(self._by_key.items())
            column.set(self._size, value)
        self._size += 1

    def __len__(self) -> int:
        return self._size

    def _entry(self, position: int) -> JsonObject:
        entry: JsonObject = {}
        for key, column in self._columns:
            codes = column.codes
            code = codes[position] if position < len(codes) else -1
            if code >= 0:
                entry[key] = column.values[code]
        return entry

    def __getitem__(self, position: Any) -> Any:
        if isinstance(position, slice):
            return [self._entry(i) for i in range(*position.indices(self._size))]
        if position < 0:
            position += self._size
        if not 0 <= position < self._size:
            raise IndexError(position)
        return self._entry(position)

    def __iter__(self) -> Iterator[JsonObject]:
        for position in range(self._size):
            yield self._entry(position)

    def has_key(self, key: str) -> bool:
        """Whether any entry has ``key``."""
        return key in self._by_key

    def value(self, position: int, key: str, default: Any = None) -> Any:
        """One entry's value for ``key`` without building the entry."""
        column = self._by_key.get(key)
        if column is None or position >= len(column.codes) or column.codes[position] < 0:
            return default
        return column.values[column.codes[position]]

    def values_of(self, key: str) -> list[Any]:
        """Every entry's value for ``key`` (None where it is absent), without building the
        entries: one column read whole."""
        column = self._by_key.get(key)
        if column is None:
            return [None] * self._size
        values, codes = column.values, column.codes
        found = [values[code] if code >= 0 else None for code in codes]
        return found + [None] * (self._size - len(found))

    def share(self, key: str, pool: Iterable[Any]) -> None:
        """Hold each of ``key``'s string values that equals one in ``pool`` as that string
        (a design's arrangement names its prompts by the prompts' own id strings): the same
        values, one string object for each, not two."""
        column = self._by_key.get(key)
        if column is None:
            return
        same = {value: value for value in pool if type(value) is str}
        column.values = [
            same.get(value, value) if type(value) is str else value for value in column.values
        ]

    def position(self, key: str, value: Any, *, last: bool = False) -> int:
        """The position of the first (``last``: the last) entry whose ``key`` is ``value``
        (an index built once per key and choice); KeyError when there is none."""
        index = self._index.get(f"{last}:{key}")
        if index is None:
            index = {}
            for position in range(self._size):
                if last:
                    index[self.value(position, key)] = position
                else:
                    index.setdefault(self.value(position, key), position)
            self._index[f"{last}:{key}"] = index
        return index[value]
