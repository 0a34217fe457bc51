"""identity stripping, for every judge. Model names, version strings, vendor
and family names and self-identification phrases leave the text before trials.jsonl is
written, replaced by one token whichever side wrote them; the list is recorded in the design,
counted per response, per side in audit.json, and disclosed in the report after the verdict."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.model.identity import (
    DEFAULT_TOKEN,
    IDENTITY_VERSION,
    builtin_terms,
    design_terms,
    final_terms,
    identity_config,
    parse_terms,
    strip_identity,
)
from blindtest.pipeline.recompute import verify_run
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from endpoint_fixtures import through_batch_api
from screen_text import flat

T = DEFAULT_TOKEN
CONFIG = identity_config(True, [], ["sim-large", "sim-small"])

#: Prompts the simulated models answer by naming themselves ("Who are you?"), and two they
#: answer without.
PROMPTS = [
    "Who are you? Explain how to plan a vegetable garden.",
    "Who are you, and how do vaccines work?",
    "Introduce yourself, then explain how to learn the piano.",
    "How should I structure a monthly budget?",
    "What makes a good code review?",
    "Who are you? Describe how to train for a marathon.",
]
NAMES = re.compile(r"sim-large|sim-small|as an ai language model", re.IGNORECASE)
#: "built by Simulated Labs": the bundled simulator's maker, in the bundled word list.
MAKER = re.compile("Simulated Labs")
#: A maker no list knows until --strip-identity-words adds it.
OUR_LAB = "Acme Labs"


def stripped(text: str, config: dict[str, Any] | None = None) -> str:
    return strip_identity(text, config or CONFIG)[0]


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


# ------------------------------------------------------------------------------ the matcher


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I use gpt-4o-mini-2024-07-18 daily.", f"I use {T} daily."),
        ("claude-3-5-sonnet-20241022 answered.", f"{T} answered."),
        ("Llama 3.1 70B is open.", f"{T} is open."),
        ("ollama runs llama3.1:8b-instruct today", f"ollama runs {T} today"),
        ("Then GPT-4o and GPT-4.", f"Then {T} and {T}."),
        ("Qwen2.5-72B-Instruct, DeepSeek-V3, Mixtral 8x7B.", f"{T}, {T}, {T}."),
        ("Gemini 1.5 Pro and Claude 3 Opus", f"{T} and {T}"),
        ("OpenAI's and Anthropic's models", f"{T}'s and {T}'s models"),
        ("As an AI language model, I cannot.", f"{T}, I cannot."),
        ("I'm Claude, made by Anthropic.", f"I'm {T}, made by {T}."),
        ("as ChatGPT would say", f"as {T} would say"),
        ("I am an AI developed by OpenAI.", f"{T}."),
        # The bundled simulator's maker phrase, stripped as a maker's name is.
        (
            "As an AI language model, I am sim-large, built by Simulated Labs.",
            f"{T}, I am {T}, built by {T}.",
        ),
        ("I'm an AI assistant built by Acme.", f"{T} Acme."),
        ("The bridge was built by Roman engineers.", "The bridge was built by Roman engineers."),
        ("I’m a large language model trained by Google DeepMind.", f"{T}."),
        ("This is sim-large speaking; sim-small agrees.", f"This is {T} speaking; {T} agrees."),
    ],
)
def test_names_versions_vendors_and_phrases_become_the_token(text: str, expected: str) -> None:
    assert stripped(text) == expected


def test_case_insensitive_and_whole_words_only() -> None:
    assert stripped("CLAUDE, claude and ClAuDe") == f"{T}, {T} and {T}"
    # Decided: a term inside a longer word is not a mention (Claudette, Openaire, Gemini's
    # stays a mention: the apostrophe ends the word).
    claudette = "Claudette met Gemini's fan at Openaire."
    assert stripped(claudette) == f"Claudette met {T}'s fan at Openaire."
    assert stripped("megpt and gptx stay") == "megpt and gptx stay"
    # A four-digit number after a space is a year, not a version: it stays.
    assert stripped("The GPT 2023 report") == f"The {T} 2023 report"
    # A version tail after a hyphen ends where the version does.
    assert stripped("GPT-4. Next sentence.") == f"{T}. Next sentence."


def test_accepted_cost_ordinary_words_that_are_model_names_are_stripped() -> None:
    """Said in the README and the word list: the llama (animal), the Gemini sign, the
    mistral wind are stripped too; a listed exception keeps Claude Shannon."""
    assert stripped("A llama under Gemini in a mistral.") == f"A {T} under {T} in a {T}."
    assert stripped("Claude Shannon founded information theory.") == (
        "Claude Shannon founded information theory."
    )


def test_longest_match_first_and_counts_per_term() -> None:
    text, counts = strip_identity("As an AI language model and as an AI, ask GPT-4o.", CONFIG)
    assert text == f"{T} and {T}, ask {T}."
    assert counts == {"as an AI language model": 1, "as an AI": 1, "GPT": 1}
    # Neighbouring mentions merge into one token but count twice.
    text, counts = strip_identity("I am an AI developed by OpenAI", CONFIG)
    assert text == T
    assert counts == {"I'm an AI developed by": 1, "OpenAI": 1}


def test_same_token_whatever_the_side_and_idempotent() -> None:
    a, _ = strip_identity("I'm sim-large, by OpenAI.", CONFIG)
    b, _ = strip_identity("I'm sim-small, by Anthropic.", CONFIG)
    assert a == b == f"I'm {T}, by {T}."
    assert strip_identity(a, CONFIG) == (a, {})


def test_nothing_stripped_without_a_record_or_when_disabled() -> None:
    text = "I'm Claude, an AI assistant by Anthropic."
    assert strip_identity(text, None) == (text, {})
    assert strip_identity(text, identity_config(False, [], ["sim-large"])) == (text, {})
    assert identity_config(False, ["x1"], ["m1"])["terms"] == []


def test_design_terms_model_names_paths_and_labels() -> None:
    names = ["meta-llama/Llama-3.1-70B-Instruct", "v2-prod", "A"]
    assert design_terms(names) == [
        "meta-llama/Llama-3.1-70B-Instruct",
        "Llama-3.1-70B-Instruct",
        "v2-prod",
    ]
    config = identity_config(True, [], names)
    assert "A" not in config["terms"]  # one letter would strip every "a"
    assert config["token"] == T
    assert config["version"] == IDENTITY_VERSION
    assert config["terms"] == sorted(config["terms"], key=lambda t: -len(t.lstrip("!")))
    assert stripped("Deployed as v2-prod today.", config) == f"Deployed as {T} today."


def test_word_list_is_package_data_and_the_extension_file_format() -> None:
    builtin = builtin_terms()
    for term in ("OpenAI", "Anthropic", "Claude", "GPT", "Llama", "Mistral", "Gemini", "Qwen",
                 "DeepSeek", "ChatGPT", "as an AI language model", "!Claude Shannon"):  # fmt: skip
        assert term in builtin
    assert parse_terms("# comment\n\nSimulated Labs\n  Acme Bot  \n!Gemini\n") == [
        "Simulated Labs",
        "Acme Bot",
        "!Gemini",
    ]
    for bad, why in (("ok\n---\n", "line 2"), ("x\n", "shorter than 2"), ("a\tb\x01\n", "control")):
        with pytest.raises(ValueError, match=why):
            parse_terms(bad)
    # A user's "!Gemini" overrides the built-in "Gemini"; a user's term is stripped.
    config = identity_config(True, ["!Gemini", "Simulated Labs"], [])
    assert "Gemini" not in config["terms"]
    assert "!Gemini" in config["terms"]
    assert stripped("Gemini by Simulated Labs", config) == f"Gemini by {T}"
    assert final_terms(["GPT"], ["gpt"]) == ["gpt"]


# ---------------------------------------------------------------------------- bt-design


def _design(invoke: Invoke, run: Path, url: str, tmp_path: Path, *extra: Any) -> Any:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\n".join(PROMPTS) + "\n")
    return invoke(
        "design", run, "--prompts", prompts, "--a", "sim-large", "--b", "sim-small",
        "--a-url", url, "--b-url", url, "--protocol", "preference", "--trials", len(PROMPTS),
        "--seed", "i13-06", *extra,
    )  # fmt: skip


def test_design_records_the_final_list_on_by_default_and_the_hash_covers_it(
    invoke: Invoke, tmp_path: Path
) -> None:
    url = "http://127.0.0.1:9/v1"
    on = _design(invoke, tmp_path / "on", url, tmp_path)
    assert on.exit_code == 0
    assert "become [redacted] for the judge, among them sim-large, sim-small" in on.stderr
    words = tmp_path / "words.txt"
    words.write_text(f"# our lab\n{OUR_LAB}\n")
    assert (
        _design(invoke, tmp_path / "more", url, tmp_path, "--strip-identity-words", words).exit_code
        == 0
    )
    off = _design(invoke, tmp_path / "off", url, tmp_path, "--no-strip-identity")
    assert off.exit_code == 0
    assert "identity stripping off: model names and self-identification reach" in off.stderr
    record = {
        name: orjson.loads((tmp_path / name / "design.json").read_bytes())["normalization"][
            "identity_strip"
        ]
        for name in ("on", "more", "off")
    }
    assert record["on"]["enabled"] is True
    assert {"sim-large", "sim-small", "OpenAI", "as an AI language model"} <= set(
        record["on"]["terms"]
    )
    assert record["on"]["token"] == T
    assert set(record["more"]["terms"]) - set(record["on"]["terms"]) == {OUR_LAB}
    assert record["off"] == {"enabled": False, "terms": [], "token": T, "version": IDENTITY_VERSION}
    hashes = {(tmp_path / n / "design.sha256").read_text() for n in ("on", "more", "off")}
    assert len(hashes) == 3


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (None, (), "--strip-identity-words {f}: no such file"),
        ("Acme\n-\n", (), "--strip-identity-words {f}: line 2: '-' has no letter or digit"),
        ("# only a comment\n", (), "--strip-identity-words {f}: no term in it"),
        (b"\xff\xfe bad\n", (), "--strip-identity-words {f}: not UTF-8 text"),
        ("Acme\n", ("--no-strip-identity",), "--strip-identity-words goes with identity"),
    ],
)
def test_bad_strip_identity_words_file_exits_2_one_line_nothing_written(
    invoke: Invoke,
    tmp_path: Path,
    content: str | bytes | None,
    extra: tuple[str, ...],
    message: str,
) -> None:
    words = tmp_path / "words.txt"
    if isinstance(content, bytes):
        words.write_bytes(content)
    elif content is not None:
        words.write_text(content)
    run = tmp_path / "run"
    result = _design(
        invoke, run, "http://127.0.0.1:9/v1", tmp_path, "--strip-identity-words", words, *extra
    )
    assert result.exit_code == 2, result.output
    assert message.format(f=words) in result.stderr
    assert result.stderr.count("\n") == 1
    assert not run.exists() or not any(run.iterdir())


def test_blindtest_run_forwards_the_options_to_the_design(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    url = simulator.base_url
    words = tmp_path / "words.txt"
    words.write_text(f"{OUR_LAB}\n")
    result = invoke(
        "run", "sim-large", "sim-small", "--a-url", url, "--b-url", url, "--demo", "--protocol",
        "preference", "--trials", 4, "--judge", "bot:length", "--run-dir", tmp_path / "r",
        "--strip-identity-words", words,
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    design = orjson.loads((tmp_path / "r" / "design.json").read_bytes())
    assert OUR_LAB in design["normalization"]["identity_strip"]["terms"]
    result = invoke(
        "run", "sim-large", "sim-small", "--a-url", url, "--b-url", url, "--demo", "--protocol",
        "preference", "--trials", 4, "--judge", "bot:length", "--run-dir", tmp_path / "off",
        "--no-strip-identity",
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    design = orjson.loads((tmp_path / "off" / "design.json").read_bytes())
    assert design["normalization"]["identity_strip"]["enabled"] is False


# ---------------------------------------------------------------------------- end to end


def test_end_to_end_names_never_reach_trials_counted_per_side_and_disclosed_after(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    words = tmp_path / "words.txt"
    words.write_text(f"{OUR_LAB}\n")
    made = _design(invoke, run, simulator.base_url, tmp_path, "--strip-identity-words", words)
    assert made.exit_code == 0, made.output
    generated = invoke("generate", run)
    assert generated.exit_code == 0, generated.output
    assert not re.search(r"\b(side )?[AB]\b.*identity|sim-", generated.stderr)

    # The simulated models named themselves; the judge's file holds none of it.
    rows = records(run / "responses.jsonl")
    raw = " ".join(r.get("raw_text", r["text"]) for r in rows)
    assert NAMES.search(raw)
    trials = (run / "trials.jsonl").read_text()
    assert not NAMES.search(trials)
    assert not MAKER.search(trials)
    assert T in trials
    touched = [r for r in rows if r.get("identity_stripped")]
    assert touched
    assert all(T in r["text"] and "raw_text" in r for r in touched)
    counted = {"A": 0, "B": 0}
    for row in touched:
        counted[row["side"]] += sum(row["identity_stripped"].values())
    assert counted["A"] > 0
    assert counted["B"] > 0

    # bt-audit: per side in audit.json; on screen a side-free total unless --show.
    audited = invoke("audit", run)
    assert audited.exit_code == 0, audited.output
    total = sum(counted.values())
    assert f"identity stripping replaced {total} mention(s) in {len(touched)} response(s)" in (
        audited.stderr
    )
    assert "A identity" not in audited.stderr
    assert "sim-large" not in audited.stderr
    audit = orjson.loads((run / "audit.json").read_bytes())["identity_stripping"]
    assert audit["mentions"] == counted
    assert sum(audit["responses"].values()) == len(touched)
    assert audit["shown"] == {"A": len(PROMPTS), "B": len(PROMPTS)}
    assert audit["terms"]["sim-large"]["mentions"]["B"] == 0
    assert audit["terms"]["sim-large"]["mentions"]["A"] > 0
    assert audit["terms"]["Simulated Labs"]["responses"]["A"] > 0
    shown = invoke("audit", run, "--show", "--force")
    assert f"A identity stripping: {counted['A']} mention(s)" in shown.stderr

    # Nothing about it before judging ends: the void report of half the picks says nothing.
    assert invoke("judge", run, "--judge", "bot:length").exit_code == 0
    picks = (run / "picks.jsonl").read_bytes()
    (run / "picks.jsonl").write_bytes(b"".join(picks.splitlines(keepends=True)[:3]))
    void = invoke("analyze", run)
    assert void.exit_code == 1, void.output
    assert "dentity stripping" not in flat(void.output)
    assert "identity" not in (run / "report.json").read_text()

    # After the verdict: disclosed, and listed among the closed channels.
    (run / "picks.jsonl").write_bytes(picks)
    analyzed = invoke("analyze", run)
    assert analyzed.exit_code in (0, 1), analyzed.output
    out = flat(analyzed.stdout)  # the screen's words, unwrapped
    sentence = (
        f"Identity stripping replaced {total} mentions in {len(touched)} responses (side A: "
        f"{counted['A']} mention{'s' * (counted['A'] != 1)} in {audit['responses']['A']}, "
        f"side B: {counted['B']} mention{'s' * (counted['B'] != 1)} in "
        f"{audit['responses']['B']})"
    )
    assert sentence in out
    assert out.index(sentence) > out.index("won")  # after the verdict
    assert "model names and self-identification (identity stripping)" in out
    report = orjson.loads((run / "report.json").read_bytes())
    assert "model names and self-identification (identity stripping)" in report["channels_closed"]
    assert report["responses"]["identity_stripped"] == {
        "mentions": counted,
        "responses": audit["responses"],
    }
    assert any(s.startswith("Identity stripping replaced") for s in report["responses_sentences"])
    page = tmp_path / "report.html"
    assert invoke("analyze", run, "--html", page).exit_code in (0, 1)
    html = page.read_text()
    assert "model names and self-identification (identity stripping)" in html
    assert sentence in html
    verified = verify_run(run)
    assert verified.ok, [str(d) for d in verified.differences]


def test_stripping_off_leaves_the_names_and_says_the_channel_is_open(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert _design(invoke, run, simulator.base_url, tmp_path, "--no-strip-identity").exit_code == 0
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert NAMES.search((run / "trials.jsonl").read_text())
    assert not any("identity_stripped" in r for r in records(run / "responses.jsonl"))
    assert invoke("judge", run, "--judge", "bot:length").exit_code == 0
    assert invoke("audit", run).exit_code == 0
    assert invoke("analyze", run).exit_code in (0, 1)
    report = orjson.loads((run / "report.json").read_bytes())
    assert "model names and self-identification (identity stripping off)" in report["channels_open"]
    assert "--no-strip-identity" in (report["next"] or {}).get("args", ["--no-strip-identity"])
    assert verify_run(run).ok


def test_laundered_text_is_stripped_too(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    made = _design(invoke, run, url, tmp_path, "--launder", "sim-launder", "--launder-url", url)
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    rows = records(run / "responses.jsonl")
    laundered = [r for r in rows if r["stage"] == "launder"]
    # The launderer keeps names (its prompt keeps every name); stripping takes them out after.
    assert any(r.get("identity_stripped") for r in laundered)
    assert not NAMES.search((run / "trials.jsonl").read_text())
    assert invoke("audit", run).exit_code == 0
    audit = orjson.loads((run / "audit.json").read_bytes())["identity_stripping"]
    assert sum(audit["mentions"].values()) == sum(
        sum(r.get("identity_stripped", {}).values()) for r in laundered
    )
    assert verify_run(run).ok


def test_batch_import_goes_through_the_same_stripping(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    live, batch = tmp_path / "live", tmp_path / "batch"
    assert _design(invoke, live, simulator.base_url, tmp_path).exit_code == 0
    assert _design(invoke, batch, simulator.base_url, tmp_path).exit_code == 0
    assert invoke("generate", live, "--quiet").exit_code == 0
    exported = tmp_path / "in.jsonl"
    assert invoke("generate", batch, "--batch-export", exported).exit_code == 0
    output, _ = through_batch_api(simulator, exported.read_bytes())
    results = tmp_path / "out.jsonl"
    results.write_bytes(output)
    imported = invoke("generate", batch, "--batch-import", results)
    assert imported.exit_code == 0, imported.output
    assert (batch / "trials.jsonl").read_bytes() == (live / "trials.jsonl").read_bytes()
    assert not NAMES.search((batch / "trials.jsonl").read_text())
    assert any(r.get("identity_stripped") for r in records(batch / "responses.jsonl"))


def test_imported_outputs_from_dirs_are_stripped(invoke: Invoke, tmp_path: Path) -> None:
    a, b = tmp_path / "gpt-4o", tmp_path / "claude-3-5-sonnet"
    a.mkdir()
    b.mkdir()
    for i in range(4):
        (a / f"q{i}.md").write_text(f"As an AI language model, I answer {i} (GPT-4o).\n")
        (b / f"q{i}.md").write_text(f"I'm Claude, and I answer {i}.\n")
    run = tmp_path / "run"
    made = invoke("design", run, "--from-dirs", a, b, "--protocol", "preference", "--trials", 4)
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    trials = (run / "trials.jsonl").read_text()
    assert not re.search(r"claude|gpt|as an ai", trials, re.IGNORECASE)


def test_old_design_without_the_field_strips_nothing_and_still_verifies(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert _design(invoke, run, simulator.base_url, tmp_path).exit_code == 0
    design = orjson.loads((run / "design.json").read_bytes())
    del design["normalization"]["identity_strip"]  # as bt-design wrote it before identity stripping
    artifacts.write_design(run, design, force=True)
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert NAMES.search((run / "trials.jsonl").read_text())
    assert not any("identity_stripped" in r for r in records(run / "responses.jsonl"))
    assert invoke("judge", run, "--judge", "bot:length").exit_code == 0
    assert invoke("audit", run).exit_code == 0
    assert invoke("analyze", run).exit_code in (0, 1)
    assert "identity_stripping" not in orjson.loads((run / "audit.json").read_bytes())
    report = orjson.loads((run / "report.json").read_bytes())
    assert "identity_stripped" not in report["responses"]
    assert not any("identity" in c for c in report["channels_open"] + report["channels_closed"])
    verified = verify_run(run)
    assert verified.ok, [str(d) for d in verified.differences]
