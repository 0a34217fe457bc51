"""A judge that imports blind-panel verdicts: ``bt-judge RUN --judge verdicts:PATH``.

PATH is a JSON array of ``{"pairId": ..., "judge": ..., "choice": "left" | "right"}``, the
verdict format of the blind-panel procedure, written by a judging stage outside blindtest for
a design with candidates (``--from-dirs`` of the same directories, or ``--candidate``). A
``pairId`` names one comparison of the design by its candidates and its item (the prompt id;
``--from-dirs`` names a prompt by its file name):

- ``CANDIDATE--ITEM``: CANDIDATE against the reference on ITEM (``--pairs reference:NAME``);
- ``X--Y--ITEM``: X against Y on ITEM, the two candidates in either order (any ``--pairs``).

``choice`` is the side as blindtest shows the comparison: ``left`` is option 1 of the trial in
``trials.jsonl`` and ``right`` option 2, whatever order the pairId names the candidates in. So
the judging stage must show each comparison as ``trials.jsonl`` has it; :func:`pair_ids` gives
the pairId of every trial. That mapping names the candidates: it belongs to whoever runs the
panel, never to a judge.

One sitting imports one judge's verdicts (``--judge-id NAME``; the default when PATH holds one
judge's), each a pick of that judge (kind ``external``) through the same recorder as a live
judge's, so the picks contract applies and a rerun resumes; run it once per judge, into the
same picks file. A judge who answered a share of the comparisons has picks for that share.

Refused in one line, before anything is written: PATH not a JSON array of such objects, a
choice other than left or right, a judge id a pick cannot carry, a pairId that names no
candidates and item of this design, or a pair the design does not compare on that item, a
judge who answers one comparison twice, a design without candidates, a judge id PATH holds no
verdicts by.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from blindtest.errors import BadInput, option
from blindtest.judging.driver import Answer, Judge, JudgeKind, JudgeSetup, JudgingResult, Stop, Turn
from blindtest.model.candidates import candidates_of, shares_answers
from blindtest.model.picks import JudgeRun, Pick, judge_id_problem

__all__ = ["CHOICES", "Verdict", "VerdictsJudge", "judge_kind", "pair_ids", "read_verdicts"]

#: What a verdict's choice may be: the comparison's left (option 1) or right (option 2).
CHOICES = ("left", "right")
#: Between the candidates and the item of a pairId.
SEPARATOR = "--"
_FIELDS = ("pairId", "judge", "choice")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One verdict, and where it stands in PATH (``entry``: its place in the array, from 1)."""

    pair_id: str
    judge: str
    choice: str
    entry: int


def read_verdicts(path: Path, value: str) -> tuple[Verdict, ...]:
    """The verdicts in ``path``, each checked on its own (``BadInput`` naming the entry):
    an object with exactly the string fields pairId, judge and choice, a choice of left or
    right, a judge id a pick can carry."""
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as error:
        raise BadInput(f"{option('kind', value)}: cannot read {path} ({error.strerror})") from None
    except orjson.JSONDecodeError as error:
        raise BadInput(f"{option('kind', value)}: {path} is not JSON ({error})") from None
    if not isinstance(data, list):
        raise BadInput(
            f"{option('kind', value)}: {path} holds a JSON {type(data).__name__}, not an "
            'array of {"pairId", "judge", "choice"} verdicts'
        )
    if not data:
        raise BadInput(f"{option('kind', value)}: {path} holds no verdicts")
    return tuple(
        _verdict(item, entry, f"{option('kind', value)}: {path} entry {entry}")
        for entry, item in enumerate(data, start=1)
    )


def _verdict(item: object, entry: int, where: str) -> Verdict:
    if not isinstance(item, dict):
        raise BadInput(f'{where} is not an object {{"pairId", "judge", "choice"}}')
    missing = [name for name in _FIELDS if name not in item]
    other = [name for name in item if name not in _FIELDS]
    if missing or other:
        said = f"lacks {missing[0]!r}" if missing else f"has a field {other[0]!r}"
        raise BadInput(f'{where} {said}; a verdict is {{"pairId", "judge", "choice"}}')
    texts = [name for name in _FIELDS if not isinstance(item[name], str)]
    if texts:
        shown = orjson.dumps(item[texts[0]]).decode()
        raise BadInput(f"{where}: {texts[0]} must be text, not {shown}")
    if item["choice"] not in CHOICES:
        raise BadInput(
            f"{where}: choice {item['choice']!r} is not left or right (left is option 1 of "
            "the comparison as trials.jsonl shows it, right option 2)"
        )
    problem = judge_id_problem(item["judge"])
    if problem is not None:
        raise BadInput(f"{where}: {problem}")
    return Verdict(item["pairId"], item["judge"], item["choice"], entry)


# --------------------------------------------------------------------------- pairIds


def pair_ids(design: Mapping[str, Any]) -> dict[int, str]:
    """trial -> the pairId that names it: ``CANDIDATE--ITEM`` against the reference of a
    ``reference:NAME`` design, else ``LEFT--RIGHT--ITEM`` as the trial shows them. The names
    are the candidates': this mapping is for whoever runs the panel, never for a judge."""
    if not shares_answers(design):
        raise ValueError("a two-sided design has no candidates to name comparisons by")
    reference = _reference(design)
    ids = {}
    for entry in design["arrangement"]:
        left, right = str(entry["left"]), str(entry["right"])
        item = str(entry["prompt_id"])
        if reference is not None and reference in (left, right):
            other = right if left == reference else left
            ids[int(entry["trial"])] = f"{other}{SEPARATOR}{item}"
        else:
            ids[int(entry["trial"])] = f"{left}{SEPARATOR}{right}{SEPARATOR}{item}"
    return ids


def _reference(design: Mapping[str, Any]) -> str | None:
    mode = str(design.get("pairing", {}).get("mode", ""))
    kind, _, name = mode.partition(":")
    return name if kind == "reference" and name else None


@dataclass(frozen=True, slots=True)
class _Comparisons:
    """A design's comparisons, by (the two candidates, the item)."""

    names: tuple[str, ...]
    items: frozenset[str]
    reference: str | None
    trials: Mapping[tuple[frozenset[str], str], tuple[int, ...]]

    @classmethod
    def of(cls, design: Mapping[str, Any]) -> _Comparisons:
        names = candidates_of(design)
        trials: dict[tuple[frozenset[str], str], list[int]] = {}
        for entry in design["arrangement"]:
            key = (frozenset((str(entry["left"]), str(entry["right"]))), str(entry["prompt_id"]))
            trials.setdefault(key, []).append(int(entry["trial"]))
        items = frozenset(str(p["id"]) for p in design["prompts"])
        frozen = {key: tuple(found) for key, found in trials.items()}
        return cls(names, items, _reference(design), frozen)

    def readings(self, pair_id: str) -> list[tuple[str, str, str]]:
        """Every (candidate, candidate, item) ``pair_id`` can be read as: names and items may
        hold the separator themselves, so each candidate name is tried as a prefix."""
        found = []
        for first in self.names:
            rest = _after(pair_id, first)
            if rest is None:
                continue
            if self.reference is not None and rest in self.items and first != self.reference:
                found.append((first, self.reference, rest))
            for second in self.names:
                item = _after(rest, second)
                if item is not None and item in self.items and second != first:
                    found.append((first, second, item))
        return found

    def trial(self, pair_id: str, where: str) -> int:
        readings = self.readings(pair_id)
        if not readings:
            forms = "CANDIDATE--ITEM or X--Y--ITEM" if self.reference else "X--Y--ITEM"
            raise BadInput(
                f"{where}: pairId {pair_id!r} names no candidates and item of this design "
                f"({forms}; candidates {', '.join(self.names)})"
            )
        meant = {(frozenset((x, y)), item) for x, y, item in readings}
        if len(meant) > 1:
            raise BadInput(f"{where}: pairId {pair_id!r} can be read as more than one comparison")
        key = meant.pop()
        trials = self.trials.get(key, ())
        x, y, item = readings[0]
        if not trials:
            raise BadInput(
                f"{where}: pairId {pair_id!r}: this design does not compare {x} and {y} on "
                f"{item!r} (its {option('pairs')} or {option('trials')} left that comparison out)"
            )
        if len(trials) > 1:  # no pairing mode shows a pair twice on one prompt
            raise BadInput(f"{where}: pairId {pair_id!r} names trials {list(trials)}, not one")
        return trials[0]


def _after(text: str, name: str) -> str | None:
    head = name + SEPARATOR
    return text[len(head) :] if text.startswith(head) and len(text) > len(head) else None


def resolve(
    design: Mapping[str, Any], verdicts: Sequence[Verdict], path: Path, value: str
) -> dict[str, dict[int, str]]:
    """judge -> trial -> choice, every verdict placed on its trial of ``design`` (``BadInput``
    for a design without candidates, a pairId that names no comparison of it, and a judge
    who answers one comparison twice)."""
    if not shares_answers(design):
        raise BadInput(
            f"{option('kind', value)}: this run's design has no candidates (a two-sided "
            "design); verdicts name candidates and items: import them into a design made with "
            f"{option('from_dirs')} of the same directories (or {option('candidate')})"
        )
    comparisons = _Comparisons.of(design)
    placed: dict[str, dict[int, str]] = {}
    first: dict[tuple[str, int], Verdict] = {}
    for verdict in verdicts:
        where = f"{option('kind', value)}: {path} entry {verdict.entry}"
        trial = comparisons.trial(verdict.pair_id, where)
        earlier = first.setdefault((verdict.judge, trial), verdict)
        if earlier is not verdict:
            same = "" if earlier.pair_id == verdict.pair_id else f" (as {earlier.pair_id!r})"
            raise BadInput(
                f"{where}: judge {verdict.judge!r} answers comparison {verdict.pair_id!r} a "
                f"second time (first at entry {earlier.entry}{same}); one verdict per judge "
                "and comparison"
            )
        placed.setdefault(verdict.judge, {})[trial] = verdict.choice
    return placed


# --------------------------------------------------------------------------- the judge


class VerdictsJudge:
    """Answers each trial asked with the judge's verdict on it (the sitting asks only those)."""

    def __init__(self, setup: JudgeSetup, choices: Mapping[int, str], kind: JudgeKind) -> None:
        self.judge_id = setup.judge_id
        self.total = setup.run.view.total
        self._choices = choices
        self._kind = kind

    @property
    def kind(self) -> JudgeKind:
        return self._kind

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        yield

    def judge(self, turn: Turn) -> Answer:
        choice = self._choices.get(turn.trial.number)
        if choice is None:
            return Stop()
        return (Pick(trial=turn.trial.number, judge=self.judge_id, pick=choice),)

    def end(self, result: JudgingResult) -> None:
        pass

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        answered = len(self._choices)
        return (
            f"Imported {result.judged_now} verdicts by {self.judge_id} into {out} "
            f"({answered} of {self.total} comparisons answered by {self.judge_id}). "
            f"Run {analyze_command} to see the result."
        )


def judge_kind(value: str) -> JudgeKind:
    """``verdicts:PATH``: PATH read and checked on its own now; against the design when the
    run is loaded (``check``), and for the judge id before anything is written."""
    path = Path(value.partition(":")[2])
    if not str(path).strip() or str(path) == ".":
        raise BadInput(
            f"{option('kind', 'verdicts:PATH')}: name the verdicts file to import, e.g. "
            f"{option('kind', 'verdicts:panel/verdicts.json')}"
        )
    verdicts = read_verdicts(path, value)
    judges = list(dict.fromkeys(v.judge for v in verdicts))
    placed: dict[str, dict[str, dict[int, str]]] = {}  # by design hash: resolved once

    def resolved(run: JudgeRun) -> dict[str, dict[int, str]]:
        if run.design_sha256 not in placed:
            placed[run.design_sha256] = resolve(run.design, verdicts, path, value)
        return placed[run.design_sha256]

    def check(run: JudgeRun) -> None:
        resolved(run)

    def answers(run: JudgeRun, judge_id: str) -> Collection[int]:
        choices = resolved(run).get(judge_id)
        if choices is None:
            listed = ", ".join(repr(j) for j in judges[:5]) + (", ..." if len(judges) > 5 else "")
            raise BadInput(
                f"{option('kind', value)}: {path} holds no verdicts by {judge_id!r}; it holds "
                f"verdicts by {listed}: import each judge's with {option('judge_id', 'NAME')}"
            )
        return frozenset(choices)

    def make(setup: JudgeSetup) -> Judge:
        choices = resolved(setup.run).get(setup.judge_id, {})
        return VerdictsJudge(setup, choices, kind)

    kind = JudgeKind(
        value,
        "external",
        make,
        check,
        default_id=judges[0] if len(judges) == 1 else None,
        answers=answers,
        from_file=True,
    )
    return kind
