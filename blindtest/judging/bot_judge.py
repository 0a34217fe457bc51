"""The tell bots as judges: ``bt-judge --judge bot:KIND`` (the bots themselves, which
``bt-audit`` replays too, are :mod:`blindtest.model.bots`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from blindtest.judging.driver import Answer, Judge, JudgeKind, JudgeSetup, JudgingResult, Turn
from blindtest.model.bots import bot_pick, bot_settings, check_bot
from blindtest.model.picks import JudgeRun
from blindtest.model.rng import DesignRng

__all__ = ["BotJudge", "judge_kind"]


class BotJudge:
    """A mechanical judge: the tell bot ``name`` answers each trial at once, from the seeded
    generator ``DesignRng(seed, "bot:<name>")``, so a rerun writes the same picks."""

    def __init__(self, run: JudgeRun, name: str, judge_id: str) -> None:
        check_bot(name, run.view.protocol)
        self.name = name
        self.judge_id = judge_id
        self.protocol = run.view.protocol
        self.total = run.view.total
        self._rng = DesignRng(run.seed, f"bot:{name}")

    @property
    def kind(self) -> JudgeKind:
        return judge_kind(f"bot:{self.name}")

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        yield

    def judge(self, turn: Turn) -> Answer:
        made = bot_pick(self.name, self.protocol, turn.trial, self._rng)
        return (replace(made, judge=self.judge_id, judge_kind="bot"),)

    def end(self, result: JudgingResult) -> None:
        pass

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        stop = " (the sequential design stopped)" if result.stopped_early else ""
        return (
            f"bot:{self.name} judged {result.judged_now} of {self.total} trials{stop} into "
            f"{out}. Run {analyze_command} to see the result."
        )


def judge_kind(value: str) -> JudgeKind:
    """``bot:KIND``: one of the tell bots (the registry has checked KIND is one)."""
    name = value.partition(":")[2]

    def check(run: JudgeRun) -> None:
        check_bot(name, run.view.protocol)

    def make(setup: JudgeSetup) -> Judge:
        return BotJudge(setup.run, name, setup.judge_id)

    def settings(protocol: str) -> Mapping[str, Any]:
        return bot_settings(name, protocol)

    return JudgeKind(value, "bot", make, check, default_id=value, settings=settings)
