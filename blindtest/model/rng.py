"""The one seeded generator: every random choice blindtest makes comes from here.

Derivation (blindtest/rng@1), written so anyone can re-derive an arrangement by hand or in
another language without depending on a library's stream stability:

* A stream is named by the design seed (any UTF-8 string) and a purpose label
  (``"arrangement"``, ``"prompts"``, ``"bot:random"``, ...).
* Block ``i`` (``i = 0, 1, 2, ...``) is
  ``SHA-256(b"blindtest/rng@1\\x00" + seed + b"\\x00" + label + b"\\x00" + str(i))``.
  Each 32-byte block is cut into four 64-bit big-endian unsigned words, used in order.
* ``randbelow(n)`` draws words ``w`` until ``w < 2**64 - (2**64 % n)`` and returns ``w % n``
  (rejection sampling, so every value is exactly equally likely).
* ``shuffle(xs)`` is Fisher-Yates: for ``i`` from ``len(xs) - 1`` down to 1, swap ``xs[i]`` with
  ``xs[randbelow(i + 1)]``.

No module touches Python's global ``random`` state or numpy's global generator.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator, MutableSequence
from typing import Any, TypeVar

T = TypeVar("T")

RNG_VERSION = "blindtest/rng@1"
_WORD = 2**64


class DesignRng:
    """Deterministic stream of uniform integers derived from (seed, label)."""

    __slots__ = ("_label", "_seed", "_words")

    def __init__(self, seed: str, label: str) -> None:
        self._seed = seed
        self._label = label
        self._words = self._word_stream()

    def _word_stream(self) -> Iterator[int]:
        prefix = b"".join(
            [RNG_VERSION.encode(), b"\x00", self._seed.encode(), b"\x00", self._label.encode()]
        )
        block = 0
        while True:
            digest = hashlib.sha256(prefix + b"\x00" + str(block).encode()).digest()
            for offset in range(0, 32, 8):
                yield int.from_bytes(digest[offset : offset + 8], "big")
            block += 1

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n < 1:
            raise ValueError(f"randbelow needs n >= 1, got {n}")
        limit = _WORD - (_WORD % n)
        while True:
            word = next(self._words)
            if word < limit:
                return word % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates shuffle in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]


def fresh_seed() -> str:
    """A new random seed for a design that was not given one (recorded in the design)."""
    return secrets.token_hex(8)


class IndexStream:
    """Bulk uniform indices for resampling (a bootstrap over trials), derived from (seed, label).

    Derivation: the first two words ``w0, w1`` of ``DesignRng(seed, label)`` make the 128-bit
    integer ``w0 * 2**64 + w1``, which seeds numpy's ``PCG64`` (through ``SeedSequence``, as
    ``PCG64(int)`` does). Its raw 64-bit outputs (``random_raw``, a stream numpy keeps stable
    across versions, unlike ``Generator`` methods) are used in order with the same rejection
    rule as ``randbelow``; ``take(rows, n)`` fills a ``rows x n`` array row by row, and the next
    call continues the stream. Hashing each word, as ``DesignRng`` does, is too slow for the
    millions a bootstrap over thousands of trials needs.
    """

    __slots__ = ("_bits",)

    def __init__(self, seed: str, label: str) -> None:
        import numpy as np

        words = DesignRng(seed, label)._words
        key = next(words) * _WORD + next(words)
        self._bits = np.random.PCG64(key)

    def take(self, rows: int, n: int) -> Any:
        """A ``rows x n`` array of uniform integers in ``[0, n)`` (numpy int64)."""
        import numpy as np

        if n < 1:
            raise ValueError(f"take needs n >= 1, got {n}")
        need = rows * n
        # Words at or past the last whole multiple of n are redrawn; when n divides 2**64
        # (a power of two) every word is kept, and that multiple, 2**64, fits no uint64.
        remainder = _WORD % n
        limit = np.uint64(_WORD - remainder) if remainder else None
        kept: list[Any] = []
        have = 0
        while have < need:
            raw = np.asarray(self._bits.random_raw(need - have), dtype=np.uint64)
            good = raw if limit is None else raw[raw < limit]
            kept.append(good)
            have += good.size
        values = np.concatenate(kept) if len(kept) > 1 else kept[0]
        return (values % np.uint64(n)).astype(np.int64).reshape(rows, n)
