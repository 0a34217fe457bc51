"""Conversations as prompts reach every judge and every export: the judging page (one judge and
a panel) shows every earlier turn under its role above the prompt, an LLM judge's
``[INPUT_CONTEXT]`` holds the whole conversation role-labelled (live, ``--show-prompt`` and the
batch export alike), the HTML report shows the turns, and ``--export-preferences`` writes TRL's
conversational preference layout (single-prompt runs keep the plain strings)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from test_judge_web import get, wait_for_trial
from test_judge_web_panel import read_all_links

from blindtest.judging.web.page import Place, trial_page
from blindtest.model.picks import JudgeView, Trial, load_judge_run
from blindtest.simulator import Simulator

from conftest import Invoke
from judge_runs import make_run
from web_page import chromium, judge_server, screenshot

TOPICS = ["gardening", "databases", "sourdough", "cycling", "chess", "astronomy", "jazz", "sailing"]
INPUT = "## INPUT CONTEXT (what both outputs were responding to)\n"


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def conversation(topic: str) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"I want to learn about {topic}. Where do I start?"},
        {"role": "assistant", "content": f"Start with the basics of {topic}, one step a day."},
        {"role": "user", "content": f"What mistakes do beginners in {topic} make?"},
    ]


def expected_context(topic: str) -> str:
    """The conversation as the judge must get it, written out by hand."""
    return (
        "A conversation of 3 turns; the outputs answer its last turn, the user's.\n\n"
        f"### Turn 1 (user)\nI want to learn about {topic}. Where do I start?\n\n"
        f"### Turn 2 (assistant)\nStart with the basics of {topic}, one step a day.\n\n"
        "### Turn 3 (user), the turn the outputs answer\n"
        f"What mistakes do beginners in {topic} make?"
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def generated_run(
    invoke: Invoke, simulator: Simulator, root: Path, protocol: str, single: int = 0
) -> Path:
    """A run whose prompts are conversations (the last ``single`` of them plain prompts)."""
    records: list[dict[str, Any]] = [
        {"id": f"c{i}", "messages": conversation(t)} for i, t in enumerate(TOPICS)
    ]
    for i in range(len(records) - single, len(records)):
        records[i] = {"id": f"s{i}", "prompt": f"Tell me one fact about {TOPICS[i]}."}
    prompts = root / f"{protocol}-prompts.jsonl"
    prompts.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    run = root / protocol
    url = simulator.base_url
    made = invoke(
        "design", run, "--prompts", prompts, "--protocol", protocol, "--trials", len(TOPICS),
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "conv",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    generated = invoke("generate", run, "--quiet")
    assert generated.exit_code == 0, generated.output
    return run


def topic_of(text: str) -> str:
    return next(t for t in TOPICS if t in text)


def input_context(content: str) -> str:
    """The ``[INPUT_CONTEXT]`` of a filled bundled template (up to its next section)."""
    after = content.split(INPUT, 1)[1]
    return re.split(r"^## ", after, maxsplit=1, flags=re.MULTILINE)[0].strip()


# --------------------------------------------------------------------------- the LLM judge


@pytest.mark.parametrize("protocol", ["preference", "triangle", "pair"])
def test_show_prompt_holds_every_turn_of_the_conversation_role_labelled(
    invoke: Invoke, simulator: Simulator, tmp_path: Path, protocol: str
) -> None:
    run = generated_run(invoke, simulator, tmp_path, protocol)
    trials = lines(run / "trials.jsonl")
    shown = invoke("judge", run, "--judge", "llm:gpt-x", "--show-prompt", 1)
    assert shown.exit_code == 0, shown.output
    topic = topic_of(trials[0]["prompt"])
    if protocol == "triangle":
        heading = "## INPUT CONTEXT (what all three outputs were responding to)\n"
        assert heading + expected_context(topic) + "\n\n## INSTRUCTIONS" in shown.stdout
    else:
        assert input_context(shown.stdout) == expected_context(topic)
    assert shown.stdout.index("### Turn 1 (user)") < shown.stdout.index("### Turn 2 (assistant)")


def test_live_judge_sends_every_turn_in_both_passes_and_the_batch_export_the_same_bodies(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated_run(invoke, simulator, tmp_path, "preference")
    url = simulator.base_url
    live = invoke("judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", url)
    assert live.exit_code == 0, live.output
    sent = [orjson.loads(r.body) for r in simulator.requests]
    sent = [b for b in sent if b.get("model") == "sim-judge-fair"]
    assert len(sent) == 2 * len(TOPICS)  # both passes of every comparison
    contexts = [input_context(b["messages"][-1]["content"]) for b in sent]
    assert sorted(contexts) == sorted(2 * [expected_context(t) for t in TOPICS])
    # The batch export carries the very bodies the live judge sent.
    requests = tmp_path / "batch-in.jsonl"
    made = invoke("judge", run, "--judge", "llm:sim-judge-fair", "--out", run / "picks-b.jsonl",
                  "--batch-export", requests)  # fmt: skip
    assert made.exit_code == 0, made.output

    def key(body: Any) -> bytes:
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)

    assert sorted(map(key, sent)) == sorted(key(line["body"]) for line in lines(requests))


def test_live_pair_judge_sends_every_turn_of_each_trial(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated_run(invoke, simulator, tmp_path, "pair")
    url = simulator.base_url
    live = invoke("judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", url)
    assert live.exit_code == 0, live.output
    sent = [orjson.loads(r.body) for r in simulator.requests]
    last = [b for b in sent if b.get("model") == "sim-judge-fair"][-1]["messages"]
    asked = [m["content"] for m in last if m["role"] == "user"]
    assert len(asked) == len(TOPICS)  # every trial, in one conversation
    for content in asked:
        topic = topic_of(content)
        assert expected_context(topic) in content


# --------------------------------------------------------------------------- the export


def test_export_preferences_writes_the_conversation_in_trls_conversational_layout(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    """Two plain prompts among the conversations: every row takes the conversational layout
    (a plain prompt as one user turn), one layout for the whole file."""
    run = generated_run(invoke, simulator, tmp_path, "preference", single=2)
    url = simulator.base_url
    picks = run / "picks-fair.jsonl"
    live = invoke("judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", url, "--out", picks)
    assert live.exit_code == 0, live.output
    out = tmp_path / "prefs.jsonl"
    result = invoke("analyze", run, "--picks", picks, "--export-preferences", out, "--quiet")
    assert result.exit_code in (0, 1), result.output
    rows = lines(out)
    assert len(rows) >= 4
    trials = {t["prompt"]: t for t in lines(run / "trials.jsonl")}
    plain = 0
    for row in rows:
        assert set(row) == {
            "prompt", "chosen", "rejected", "judge", "confidence", "reason", "text", "judge_saw"
        }  # fmt: skip
        assert isinstance(row["prompt"], list)
        last = row["prompt"][-1]
        assert set(last) == {"role", "content"}
        assert last["role"] == "user"
        trial = trials[last["content"]]
        if trial.get("history"):
            assert row["prompt"] == conversation(topic_of(last["content"]))
        else:
            plain += 1
            assert row["prompt"] == [{"role": "user", "content": trial["prompt"]}]
        assert len(row["chosen"]) == len(row["rejected"]) == 1
        assert row["chosen"][0]["role"] == row["rejected"][0]["role"] == "assistant"
        assert set(row["chosen"][0]) == set(row["rejected"][0]) == {"role", "content"}
        pair = sorted([row["chosen"][0]["content"], row["rejected"][0]["content"]])
        assert pair == sorted(trial["options"])
    assert 0 < plain < len(rows)


# --------------------------------------------------------------------------- the pages


def history_of(prompt: int) -> list[tuple[str, str]]:
    return [
        ("user", f"Turn one of conversation {prompt}: plan a trip."),
        ("assistant", f"Turn two of conversation {prompt}: <script>window.__pwned = 1</script>"),
        ("user", f"Turn three of conversation {prompt}: make it **cheaper**."),
        ("assistant", f"Turn four of conversation {prompt}: a hostel then."),
    ]


def test_judging_page_shows_every_earlier_turn_under_its_role_above_the_prompt(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path, "preference", trials=3, history=history_of)
    total = load_judge_run(run).view.total
    # Its own browser, closed at the end: Playwright's loop would stop the in-process CLI
    # tests of this module (asyncio.run inside a running loop).
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        with judge_server(run, "--judge-id", "ivy") as server:
            page.goto(server.url)
            for number in range(1, total + 1):
                wait_for_trial(page, number, total)
                if number == 1:
                    screenshot(page, "judge-conversation-wide")
                prompt = page.locator("#prompt .text").inner_text()
                history = history_of(int(re.findall(r"\d+", prompt)[0]))
                heading = page.locator("#conversation > h2").inner_text()
                assert heading == "Conversation: 4 earlier turns, then the prompt"
                turns = page.locator("#conversation .turn")
                assert turns.count() == len(history)
                for index, (role, content) in enumerate(history):
                    turn = turns.nth(index)
                    assert turn.locator("h3").inner_text() == role
                    shown = turn.locator(".text").inner_text().strip()
                    assert shown == content.replace("**", "")  # markdown, as the options
                assert "<script>" in turns.nth(1).inner_text()  # shown as text, never run
                assert page.locator("#conversation script").count() == 0
                assert turns.nth(2).locator("strong").inner_text() == "cheaper"
                last = turns.nth(3).bounding_box()
                assert last["y"] < page.locator("#prompt").bounding_box()["y"]
                page.keyboard.press("l")
                page.locator("#reason").fill("fine")
                page.locator("#submit").click()
            page.wait_for_selector("text=All 3 trials judged")
            assert page.evaluate("window.__pwned === undefined")
            server.finish()


def test_panel_page_shows_every_earlier_turn(tmp_path: Path) -> None:
    run = make_run(tmp_path, "triangle", trials=4, history=history_of)
    with judge_server(run, "--panel", "ann,bea") as server:
        for url in read_all_links(server, 2).values():
            status, body = get(url)
            assert status == 200
            number = int(re.search(r'name="trial" value="(\d+)"', body).group(1))  # type: ignore[union-attr]
            prompt = int(re.search(r"conversation (\d+)", body).group(1))  # type: ignore[union-attr]
            assert 1 <= number <= 4
            assert "Conversation: 4 earlier turns, then the prompt" in body
            for _, content in history_of(prompt):
                head = content.split(":")[0]
                assert head in body
            assert "&lt;script&gt;window.__pwned" in body
            assert body.index("Turn four of") < body.index('id="prompt"')
        server.interrupt()


def test_page_shows_the_same_conversation_whichever_side_is_which() -> None:
    """The conversation is the prompt file's: swapping the options changes nothing else."""
    history = tuple(history_of(1))
    one = Trial(1, "The prompt.", ("Answer from one side.", "Answer from the other."), history)
    two = Trial(1, "The prompt.", one.options[::-1], history)
    view = JudgeView("preference", (one,), "Which is better?")
    pages = [
        trial_page(view, t, Place(1, 1), "/x", plain=False, nicknames=None) for t in (one, two)
    ]
    conversations = [p.split('id="conversation"', 1)[1].split('id="prompt"', 1)[0] for p in pages]
    assert conversations[0] == conversations[1]
    assert "Turn four of conversation 1" in conversations[0]


def test_html_report_shows_each_trials_earlier_turns(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated_run(invoke, simulator, tmp_path, "triangle")
    assert invoke("judge", run, "--judge", "bot:length").exit_code == 0
    html = tmp_path / "report.html"
    analyzed = invoke("analyze", run, "--html", html, "--quiet")
    assert analyzed.exit_code in (0, 1), analyzed.output
    page = html.read_text()
    for topic in TOPICS:
        first = f"I want to learn about {topic}. Where do I start?"
        assert f"<strong>Earlier turn 1 (user)</strong><p>{first}</p>" in page
        assert f"<p>Start with the basics of {topic}, one step a day.</p>" in page
    assert page.count("Earlier turn 2 (assistant)") == len(TOPICS)
