"""People judge exactly the comparisons of the prompts the design sampled for them
(``bt-design --people-sample N``), in the terminal, on the page and on a panel; any other judge
(a bot, an LLM judge) judges every comparison."""

from __future__ import annotations

import re
import threading
import urllib.parse
from pathlib import Path

from test_judge_web import get

from blindtest.judging.driver import JudgeSetup
from blindtest.judging.sitting import open_picks, people_share
from blindtest.judging.stage import judge_panel
from blindtest.judging.terminal.session import HUMAN
from blindtest.judging.web.server import WEB
from blindtest.model.assignment import assign, coverage
from blindtest.model.judge_kinds import REGISTRY
from blindtest.model.people_sample import people_pool, people_trials
from blindtest.model.picks import load_judge_run

from conftest import Invoke
from judge_runs import make_run, picks_of


def _sampled(tmp_path: Path, trials: int = 10, size: int = 3) -> Path:
    return make_run(tmp_path, "preference", trials, people_sample=size)


def test_a_person_in_the_terminal_is_asked_only_the_sampled_comparisons(
    tmp_path: Path, invoke: Invoke
) -> None:
    run_dir = _sampled(tmp_path)
    sampled = people_trials(load_judge_run(run_dir).design)
    assert sampled is not None
    assert len(sampled) == 3
    done = invoke("judge", run_dir, "--judge-id", "ann", input="1\nok\n2\nfine\nt\nsame\n")
    assert done.exit_code == 0, done.stderr
    assert [p["trial"] for p in picks_of(run_dir / "picks.jsonl")] == list(sampled)
    # The person's progress counts its share, the trial keeps its number.
    first, _, last = sampled
    assert f"trial {first} (1 of 3)" in done.stdout
    assert f"trial {last} (3 of 3)" in done.stdout
    assert "All 3 trials judged." in done.stdout


def test_a_bot_judges_every_comparison_of_a_sampled_design(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = _sampled(tmp_path)
    done = invoke("judge", run_dir, "--judge", "bot:length", "--out", run_dir / "bot.jsonl")
    assert done.exit_code == 0, done.stderr
    assert len(picks_of(run_dir / "bot.jsonl")) == 10


def test_only_the_kinds_that_record_as_a_person_are_held_to_the_sample(tmp_path: Path) -> None:
    run = load_judge_run(_sampled(tmp_path))
    assert people_share(run, HUMAN) == people_trials(run.design)
    assert people_share(run, WEB) == people_trials(run.design)
    machines = [kind for kind in REGISTRY if kind.records_as in ("bot", "llm")]
    assert machines
    unsampled = load_judge_run(make_run(tmp_path, "preference", 10, name="whole"))
    assert people_share(unsampled, HUMAN) is None


def test_the_judging_page_counts_the_persons_share(tmp_path: Path) -> None:
    run = load_judge_run(_sampled(tmp_path))
    share = people_share(run, WEB)
    assert share is not None
    opened = open_picks(run, WEB, "ann", run.run_dir / "picks.jsonl", False)
    judge = WEB.make(JudgeSetup(run, "ann", opened.existing, share=share))
    assert judge.reviewer.total == 3  # type: ignore[attr-defined]


def test_a_panel_is_dealt_only_the_sampled_comparisons(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", 20, people_sample=6))
    pool = people_pool(run.design)
    assert len(pool) == 6
    dealt = assign(run.seed, pool, ["ann", "bob", "cy"], 4)
    assert set().union(*dealt.values()) == set(pool)
    assert sorted(coverage(dealt, pool).values()) == [2] * 6  # 3 x 4 = 12 = 2 x 6
    # Without a sample the ring is every trial, as before.
    assert assign(run.seed, 20, ["ann"], None) == {"ann": tuple(range(1, 21))}


def test_a_panels_reviewers_judge_the_sample_on_the_page(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", 8, people_sample=2))
    pool = set(people_pool(run.design))
    lines: list[str] = []
    sitting = threading.Thread(
        target=lambda: judge_panel(
            run.run_dir, ["ann", "bob"], per_judge=None, open_browser=False, echo=lines.append
        )
    )
    sitting.start()
    try:
        urls: dict[str, str] = {}
        while len(urls) < 2:
            for line in list(lines):
                found = re.match(r"^(\S+) \(2 trials\): open (http\S+)$", line)
                if found:
                    urls[found.group(1)] = found.group(2)
            sitting.join(0.05)
            assert sitting.is_alive() or urls, lines
        for url in urls.values():
            for _ in range(2):
                _, body = get(url)
                trial = int(re.findall(r'name="trial" value="(\d+)"', body)[0])
                assert trial in pool
                mark = re.findall(r'name="mark" value="([^"]+)"', body)[0]
                form = urllib.parse.urlencode(
                    {"trial": trial, "mark": mark, "pick": "left", "reason": "ok"}
                )
                get(url + "pick", form.encode())
            get(url + "static/page.css")
    finally:
        sitting.join(60)
    assert not sitting.is_alive()
    for name in ("ann", "bob"):
        assert {p["trial"] for p in picks_of(run.run_dir / f"picks-{name}.jsonl")} == pool
