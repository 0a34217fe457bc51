"""bt-design with several candidates: --candidate, --sides, --from-dirs with k directories,
--pairs; the refusals (one line, exit 2, nothing written); two-sided designs unchanged to the
byte; the schedule written is pairing.schedule's; bt-verify re-derives it and catches a
tampered one."""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blindtest
from blindtest.designing.build import build_design
from blindtest.designing.request import DesignRequest, resolve_request
from blindtest.model import pairing
from blindtest.pipeline.recompute import verify_run
from blindtest.rundir import artifacts

from conftest import Invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FOUR = tuple(
    arg for pair in ("alpha=m1", "beta=m2", "gamma=m3", "delta=m4") for arg in ("--candidate", pair)
)


def load(path: Path) -> Any:
    return orjson.loads(path.read_bytes())


def prompts_file(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "prompts.txt"
    path.write_text("".join(f"Question {i}: say something about {i}.\n" for i in range(n)))
    return path


def one_line_refusal(result: Any, run: Path, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    assert not run.exists()


# ---------------------------------------------------------------------- --candidate


def test_candidates_make_a_preference_design_with_every_pair_on_every_prompt(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    result = invoke(
        "design", run, "--prompts", prompts_file(tmp_path, 10), *FOUR, "--seed", "s",
        "--temperature", "0.5", "--max-tokens", "200", "--system", "Be brief.",
        "--url", "http://127.0.0.1:9/v1", "--key-env", "MY_KEY",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    design = load(run / "design.json")
    assert design["candidates"] == ["alpha", "beta", "gamma", "delta"]
    assert design["pairing"] == {"version": "blindtest/pairing@1", "mode": "all"}
    assert design["protocol"] == "preference"
    assert design["trials"] == len(design["arrangement"]) == 10 * 6
    assert design["system"] == "Be brief."
    assert set(design["models"]) == {"alpha", "beta", "gamma", "delta"}
    assert design["models"]["gamma"] == {
        "model": "m3",
        "base_url": "http://127.0.0.1:9/v1",
        "key_env": "MY_KEY",
        "params": {"temperature": 0.5, "max_tokens": 200},
    }
    assert "controls" not in design
    assert [e["trial"] for e in design["arrangement"]] == list(range(1, 61))
    # Identity stripping hides every candidate's model name, not just two.
    assert {"m1", "m2", "m3", "m4"} <= set(design["normalization"]["identity_strip"]["terms"])


def test_the_arrangement_is_pairing_schedule_in_its_order(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    path = prompts_file(tmp_path, 9)
    args = ("--pairs", "sample:2", "--seed", "k7")
    assert invoke("design", run, "--prompts", path, *FOUR, *args).exit_code == 0
    design = load(run / "design.json")
    ids = [p["id"] for p in design["prompts"]]
    expected = pairing.schedule(["alpha", "beta", "gamma", "delta"], 9, "sample:2", "k7")
    assert [(e["prompt_id"], e["left"], e["right"]) for e in design["arrangement"]] == [
        (ids[c.prompt], c.left, c.right) for c in expected
    ]
    assert design["trials"] == 18


def test_reference_pairs_and_a_trials_cap(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    path = prompts_file(tmp_path, 8)
    result = invoke(
        "design", run, "--prompts", path, *FOUR, "--pairs", "reference:beta", "--trials", "20",
        "--seed", "r",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    design = load(run / "design.json")
    assert design["pairing"]["mode"] == "reference:beta"
    assert design["trials"] == 20  # the cap (8 prompts x 3 would be 24)
    assert all("beta" in (e["left"], e["right"]) for e in design["arrangement"])
    expected = pairing.schedule(design["candidates"], 8, "reference:beta", "r", trials=20)
    assert [(e["left"], e["right"]) for e in design["arrangement"]] == [
        (c.left, c.right) for c in expected
    ]


def test_trials_above_the_schedule_give_the_whole_schedule(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    path = prompts_file(tmp_path, 3)
    assert invoke("design", run, "--prompts", path, *FOUR, "--trials", "500").exit_code == 0
    assert load(run / "design.json")["trials"] == 18


def test_the_summary_counts_comparisons_answers_and_tokens_before_anything_is_sent(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    path = prompts_file(tmp_path, 10)
    result = invoke("design", run, "--prompts", path, *FOUR, "--seed", "7", "--max-tokens", "50")
    assert result.exit_code == 0, result.stderr
    err = result.stderr
    assert "preference design, 4 candidates: alpha (m1), beta (m2), gamma (m3), delta (m4)" in err
    assert "pairs all: every pair of candidates on every prompt; 6 pairs, each met 10 times" in err
    assert "60 comparisons from 10 prompts, seed 7, alpha 0.05" in err
    assert "answers to generate: 40 (10 per candidate)" in err
    assert "  alpha           10" in err
    assert "~500" in err  # 10 answers x 50 tokens
    assert "bt-generate" in err
    assert "trials this design" not in err  # no two-sided power line
    assert all(len(line) <= 80 for line in err.splitlines() if line.startswith("  "))


# ---------------------------------------------------------------------- --sides FILE


SIDES_JSON = {
    "zeta": {
        "model": "big-model",
        "base_url": "http://127.0.0.1:8001/v1",
        "key_env": "ZETA_KEY",
        "system": "You are terse.",
        "template": "Answer: {prompt}",
        "params": {"temperature": 0.2, "max_tokens": 99, "top_p": 0.9},
        "extra_params": {"seed": 3, "reasoning_effort": "low"},
        "label": "Zeta v2",
    },
    "alpha": {"model": "small-model"},
    "mid": {"model": "mid-model", "temperature": 0.7},
}


def test_the_summary_says_how_many_prompts_before_any_pair_can_be_told_apart(
    invoke: Invoke, tmp_path: Path
) -> None:
    # Holm over the 12 ordered pairs of four candidates: a pair needs 8 untied comparisons
    # all one way (2 x 6 x 0.5^8 <= 0.05 < 2 x 6 x 0.5^7), so 7 prompts are refused in words
    # and 8 are enough; the design is written either way.
    few = invoke("design", tmp_path / "few", "--prompts", prompts_file(tmp_path, 7), *FOUR)
    assert few.exit_code == 0, few.stderr
    said = " ".join(few.stderr.split())
    assert "warning: with 7 prompts no two of the 4 candidates can be told apart" in said
    assert "a pair needs 8 untied comparisons all one way" in said
    enough = invoke("design", tmp_path / "enough", "--prompts", prompts_file(tmp_path, 8), *FOUR)
    assert enough.exit_code == 0, enough.stderr
    said = " ".join(enough.stderr.split())
    assert "a pair can first be told apart after 8 untied comparisons" in said
    assert "warning" not in said


def test_sides_json_gives_each_candidate_its_full_configuration_in_order(
    invoke: Invoke, tmp_path: Path
) -> None:
    sides = tmp_path / "sides.json"
    sides.write_text(json.dumps(SIDES_JSON))
    run = tmp_path / "run"
    path = prompts_file(tmp_path, 4)
    result = invoke("design", run, "--prompts", path, "--sides", sides, "--max-tokens", "10")
    assert result.exit_code == 0, result.stderr
    design = load(run / "design.json")
    assert design["candidates"] == ["zeta", "alpha", "mid"]
    assert design["models"]["zeta"] == {
        "model": "big-model",
        "base_url": "http://127.0.0.1:8001/v1",
        "key_env": "ZETA_KEY",
        "system": "You are terse.",
        "template": "Answer: {prompt}",
        "params": {"temperature": 0.2, "max_tokens": 99, "top_p": 0.9},
        "extra_params": {"seed": 3, "reasoning_effort": "low"},
        "label": "Zeta v2",
    }
    # What a table leaves out comes from the shared options.
    assert design["models"]["alpha"]["params"] == {"temperature": 1.0, "max_tokens": 10}
    assert design["models"]["mid"]["params"] == {"temperature": 0.7, "max_tokens": 10}
    assert "Zeta v2" in design["normalization"]["identity_strip"]["terms"]


NEEDS_TOMLLIB = pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11's")


@NEEDS_TOMLLIB
def test_sides_toml_list_form_equals_the_json_table_form(invoke: Invoke, tmp_path: Path) -> None:
    toml = tmp_path / "sides.toml"
    toml.write_text(
        '[[candidate]]\nname = "zeta"\nmodel = "big-model"\nsystem = """You are terse."""\n'
        "[candidate.params]\ntemperature = 0.2\n\n"
        '[[candidate]]\nname = "alpha"\nmodel = "small-model"\n'
    )
    as_json = tmp_path / "sides.json"
    as_json.write_text(
        json.dumps(
            [
                {"name": "zeta", "model": "big-model", "system": "You are terse.",
                 "params": {"temperature": 0.2}},
                {"name": "alpha", "model": "small-model"},
            ]
        )
    )  # fmt: skip
    path = prompts_file(tmp_path, 4)
    for name, sides in (("t", toml), ("j", as_json)):
        args = ("--prompts", path, "--sides", sides, "--seed", "x")
        assert invoke("design", tmp_path / name, *args).exit_code == 0
    first, second = load(tmp_path / "t" / "design.json"), load(tmp_path / "j" / "design.json")
    first.pop("provenance"), second.pop("provenance")
    assert first == second
    assert first["candidates"] == ["zeta", "alpha"]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"a": {"model": "m", "temprature": 1}}', ("unknown key 'temprature'",)),
        ('{"a": {"model": "m"}, "b": {}}', ('needs "model"',)),
        ('{"a": {"model": "m"}, "b": {"model": "n", "extra_params": {"model": "x"}}}',
         ("extra_params sets 'model'",)),
        ('{"a": {"model": "m"}, "b": {"model": "n", "params": {"stop": 1}}}',
         ("put 'stop' in extra_params",)),
        ("[1, 2]", ('needs a "name"',)),
        ('{"a": {"model": "m", "url": "http://u:p@h/v1"}, "b": {"model": "n"}}',
         ("candidate a: base_url", "with candidate a: key_env")),
        ('{"a": {"model": "m", "key_env": "sk-1"}, "b": {"model": "n"}}',
         ("candidate a: key_env: 'sk-1' is not an environment variable name",)),
        ('{"a": {"model": "m"}, "b": {"model": "n", "temperature": 5}}',
         ("got 5.0 (candidate b; a --sides table's temperature",)),
        ('{"a": {"model": "m"}}', ("1 candidate: a design takes 2 to 20",)),
        ("{not json", ("not JSON",)),
    ],
)  # fmt: skip
def test_a_malformed_sides_file_is_refused_in_one_line(
    invoke: Invoke, tmp_path: Path, content: str, words: tuple[str, ...]
) -> None:
    sides = tmp_path / "sides.json"
    sides.write_text(content)
    run = tmp_path / "run"
    result = invoke("design", run, "--prompts", prompts_file(tmp_path, 3), "--sides", sides)
    one_line_refusal(result, run, *words)


# ---------------------------------------------------------------------- --from-dirs DIR...


def candidate_dirs(tmp_path: Path, names: tuple[str, ...], items: int = 5) -> list[Path]:
    dirs = []
    for name in names:
        folder = tmp_path / "out" / name
        folder.mkdir(parents=True)
        for i in range(items):
            (folder / f"q{i}.md").write_text(f"{name} answers {i}\n")
        dirs.append(folder)
    return dirs


def test_three_directories_make_a_candidates_design_named_by_directory(
    invoke: Invoke, tmp_path: Path
) -> None:
    dirs = candidate_dirs(tmp_path, ("v1", "v2", "v3"))
    (dirs[0] / "extra.md").write_text("only v1 has it\n")
    (dirs[2] / "q0.md").unlink()
    run = tmp_path / "run"
    result = invoke("design", run, "--from-dirs", *dirs, "--seed", "d")
    assert result.exit_code == 0, result.stderr
    assert "dropped 1 item(s) missing from v2: extra.md\n" in result.stderr
    assert "dropped 2 item(s) missing from v3: extra.md, q0.md\n" in result.stderr
    assert "missing from v1" not in result.stderr
    assert "no model is called" in result.stderr
    design = load(run / "design.json")
    assert design["candidates"] == ["v1", "v2", "v3"]
    assert design["models"]["v2"] == {"model": "v2", "dir": str(dirs[1].resolve())}
    assert design["source"]["dirs"] == {d.name: str(d.resolve()) for d in dirs}
    assert sorted(design["source"]["files"]) == ["q1.md", "q2.md", "q3.md", "q4.md"]
    assert set(design["source"]["files"]["q1.md"]) == {"v1", "v2", "v3"}
    assert design["source"]["dropped"] == {"v2": ["extra.md"], "v3": ["extra.md", "q0.md"]}
    assert design["trials"] == 4 * 3


def test_two_directories_with_pairs_are_two_candidates(invoke: Invoke, tmp_path: Path) -> None:
    dirs = candidate_dirs(tmp_path, ("old", "new"))
    run = tmp_path / "run"
    assert invoke("design", run, "--from-dirs", *dirs, "--pairs", "all").exit_code == 0
    design = load(run / "design.json")
    assert design["candidates"] == ["old", "new"]
    assert design["trials"] == 5


def test_from_dirs_takes_every_directory_up_to_the_next_option(
    invoke: Invoke, tmp_path: Path
) -> None:
    dirs = candidate_dirs(tmp_path, ("a1", "b1", "c1", "d1"))
    run = tmp_path / "run"
    result = invoke(
        "design", run, "--from-dirs", *dirs[:2], "--seed", "1", "--from-dirs", *dirs[2:]
    )
    assert result.exit_code == 0, result.stderr
    assert load(run / "design.json")["candidates"] == ["a1", "b1", "c1", "d1"]


# ---------------------------------------------------------------------- two sides: every byte


def test_the_example_design_through_bt_design_keeps_every_byte(
    invoke: Invoke, tmp_path: Path
) -> None:
    golden = load(EXAMPLES / "run" / "design.json")
    url = golden["models"]["A"]["base_url"]
    request = DesignRequest(
        prompts_file=EXAMPLES / "prompts.jsonl", model_a="sim-large", model_b="sim-small",
        a_url=url, b_url=url, trials=20, seed="example-1",
    )  # fmt: skip
    resolved = resolve_request(request)
    rebuilt = build_design(resolved.prompts, resolved.options, golden["provenance"])
    assert artifacts.dump_json(rebuilt) == (EXAMPLES / "run" / "design.json").read_bytes()
    # And through the command (provenance is this machine's; the rest is the same).
    run = tmp_path / "run"
    args = ("--a-url", url, "--b-url", url, "--trials", "20", "--seed", "example-1", "-q")
    result = invoke(
        "design", run, "--prompts", EXAMPLES / "prompts.jsonl", "--a", "sim-large", "--b",
        "sim-small", *args,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    made = load(run / "design.json")
    made["provenance"] = golden["provenance"]
    assert artifacts.dump_json(made) == (EXAMPLES / "run" / "design.json").read_bytes()


#: The SHA-256 of the two-directory design below, made by blindtest before several candidates
#: existed (commit ac81a83) with the same script: the two-directory mode keeps its bytes.
#: Re-pinned when the bundled word list gained the simulator's maker and the "built by"
#: phrases: with the former list in identity_strip.terms the bytes hash to 349e4aa3...6a6.
TWO_DIRS_SHA256 = "72ebc74d3bb41750ca77ef16d3a583138392fec45812f82791e02b736fb50d4c"


def test_two_directories_keep_the_two_sided_design_byte_for_byte(
    invoke: Invoke, tmp_path: Path
) -> None:
    a, b = tmp_path / "model-a", tmp_path / "model-b"
    a.mkdir()
    b.mkdir()
    for i in range(1, 7):
        (a / f"q{i}.md").write_text(f"A answers {i}\n")
        (b / f"q{i}.md").write_text(f"B answers {i}\n")
    (a / "only-in-a.md").write_text("x\n")
    run = tmp_path / "run"
    result = invoke(
        "design", run, "--from-dirs", a, b, "--protocol", "preference", "--trials", "5",
        "--seed", "s1", "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    design = load(run / "design.json")
    assert "candidates" not in design
    assert "pairing" not in design
    design["provenance"] = {"blindtest": "x", "python": "x", "packages": {}, "git": None}
    data = artifacts.dump_json(design).replace(str(tmp_path.resolve()).encode(), b"BASE")
    assert hashlib.sha256(data).hexdigest() == TWO_DIRS_SHA256


# ---------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (("--a", "x", "--b", "y"), ("--a names a side", "--candidate")),
        (("--a-system", "hi"), ("--a-system sets one side", "--sides FILE")),
        (("--b-param", "top_p=1"), ("--b-param sets one side",)),
        (("--protocol", "triangle"), ("--protocol triangle is refused with candidates",)),
        (("--protocol", "pair"), ("--protocol pair is refused",)),
        (("--controls", "2"), ("--controls is refused with candidates",)),
        (("--pairs", "reference:omega"), ("no candidate of that name", "alpha, beta")),
        (("--pairs", "sample:7"), ("M must be 1 to 6",)),
        (("--pairs", "sample:0"), ("whole number >= 1",)),
        (("--pairs", "some"), ("give all, reference:NAME or sample:M",)),
        (("--candidate", "alpha=m9"), ("'alpha' is named twice",)),
        (("--candidate", "left=m9"), ("is a word blindtest uses",)),
        (("--candidate", "bad name=m9"), ("candidate name 'bad name'",)),
        (("--candidate", "nomodel"), ("give NAME=MODEL",)),
        (("--url", "ftp://x"), ("--url: 'ftp://x' is not an http(s) URL",)),
        (("--key-env", "sk-123"), ("--key-env: 'sk-123' is not an environment variable",)),
        (("--trials", "0"), ("--trials must be at least 1",)),
        (("--temperature", "3"), ("--temperature must be in [0, 2]",)),
    ],
)
def test_candidate_refusals_are_one_line_exit_2_nothing_written(
    invoke: Invoke, tmp_path: Path, extra: tuple[str, ...], words: tuple[str, ...]
) -> None:
    run = tmp_path / "run"
    result = invoke("design", run, "--prompts", prompts_file(tmp_path, 5), *FOUR, *extra)
    one_line_refusal(result, run, *words)


def test_one_candidate_and_twenty_one_are_refused(invoke: Invoke, tmp_path: Path) -> None:
    path = prompts_file(tmp_path, 5)
    run = tmp_path / "run"
    one = invoke("design", run, "--prompts", path, "--candidate", "solo=m")
    one_line_refusal(one, run, "1 candidate: a design takes 2 to 20")
    many = [arg for i in range(21) for arg in ("--candidate", f"c{i}=m{i}")]
    one_line_refusal(invoke("design", run, "--prompts", path, *many), run, "21 candidates")


def test_pairs_without_candidates_is_refused(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    path = prompts_file(tmp_path, 30)
    result = invoke("design", run, "--prompts", path, "--a", "x", "--b", "y", "--pairs", "all")
    one_line_refusal(result, run, "--pairs goes with several candidates")


def test_candidate_and_sides_together_are_refused(invoke: Invoke, tmp_path: Path) -> None:
    sides = tmp_path / "sides.json"
    sides.write_text(json.dumps(SIDES_JSON))
    run = tmp_path / "run"
    path = prompts_file(tmp_path, 5)
    result = invoke("design", run, "--prompts", path, *FOUR, "--sides", sides)
    one_line_refusal(result, run, "give the candidates once")


def test_from_dirs_refusals(invoke: Invoke, tmp_path: Path) -> None:
    dirs = candidate_dirs(tmp_path, ("v1", "v2", "v3"))
    run = tmp_path / "run"
    one_line_refusal(
        invoke("design", run, "--from-dirs", *dirs, "--candidate", "x=y", "--candidate", "z=w"),
        run,
        "--from-dirs names the candidates by their directories",
    )
    one_line_refusal(invoke("design", run, "--from-dirs", dirs[0]), run, "two directories or more")
    one_line_refusal(
        invoke("design", run, "--from-dirs", *dirs, "--max-tokens", "5"), run, "calls none"
    )
    twin = tmp_path / "elsewhere" / "v1"
    twin.mkdir(parents=True)
    (twin / "q0.md").write_text("x\n")
    one_line_refusal(
        invoke("design", run, "--from-dirs", *dirs, twin),
        run,
        "two candidate directories are named 'v1'",
    )
    bad = tmp_path / "out" / "tie"
    bad.mkdir()
    (bad / "q0.md").write_text("x\n")
    one_line_refusal(invoke("design", run, "--from-dirs", *dirs, bad), run, "'tie' is a word")


# ---------------------------------------------------------------------- bt-verify


def test_verify_rederives_the_arrangement_and_catches_tampering(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    path = prompts_file(tmp_path, 6)
    assert invoke("design", run, "--prompts", path, *FOUR, "--pairs", "sample:3").exit_code == 0
    result = verify_run(run)
    assert "arrangement from the seed" in result.checked
    assert not [d for d in result.differences if "design.json" in d.where], result.differences

    def tampered(change: Any) -> list[str]:
        design = load(run / "design.json")
        change(design)
        data = artifacts.dump_json(design)
        (run / "design.json").write_bytes(data)
        (run / "design.sha256").write_text(artifacts.sha256_bytes(data) + "\n")
        return [d.where for d in verify_run(run).differences if "design.json" in d.where]

    original = (run / "design.json").read_bytes()

    def swap(design: Any) -> None:
        entry = design["arrangement"][4]
        entry["left"], entry["right"] = entry["right"], entry["left"]

    assert tampered(swap) == ["design.json/arrangement/4/left", "design.json/arrangement/4/right"]
    (run / "design.json").write_bytes(original)

    def reseed(design: Any) -> None:
        design["seed"] = "another"

    assert any(where.startswith("design.json/arrangement/") for where in tampered(reseed))
    (run / "design.json").write_bytes(original)

    def drop_last(design: Any) -> None:
        design["arrangement"].pop()

    assert "design.json/trials" in tampered(drop_last)
    (run / "design.json").write_bytes(original)

    def other_mode(design: Any) -> None:
        design["pairing"]["mode"] = "sample:2"

    assert tampered(other_mode)


# ---------------------------------------------------------------------- the Python API


def test_the_python_api_takes_candidates_and_sides(tmp_path: Path) -> None:
    path = prompts_file(tmp_path, 5)
    made = blindtest.design(
        tmp_path / "one", prompts_file=str(path), candidate=["a=m1", "b=m2", "c=m3"], seed="p"
    )
    assert made.design["candidates"] == ["a", "b", "c"]
    assert made.options.trials == 15
    sides = [{"name": "x", "model": "m1"}, {"name": "y", "model": "m2", "label": "Y"}]
    made = blindtest.design(
        tmp_path / "two", prompts_file=str(path), sides=sides, pairs="reference:x", seed="p"
    )
    assert made.design["candidates"] == ["x", "y"]
    assert made.design["models"]["y"]["label"] == "Y"
    assert made.design["pairing"]["mode"] == "reference:x"
    assert verify_run(tmp_path / "two").checked[:3] == [
        "design.sha256",
        "prompt hashes",
        "arrangement from the seed",
    ]


# ---------------------------------------------------------------------- scale


def test_twenty_candidates_every_pair_on_a_thousand_prompts_is_built(tmp_path: Path) -> None:
    """190,000 comparisons: built and re-derived (no time limit: that it runs at all shows
    nothing quadratic in the comparisons is left in the design path)."""
    path = prompts_file(tmp_path, 1000)
    names = [f"c{i}" for i in range(20)]
    made = blindtest.design(
        tmp_path / "big", prompts_file=str(path), candidate=[f"{n}=m-{n}" for n in names],
        seed="big",
    )  # fmt: skip
    design = made.design
    assert design["trials"] == len(design["arrangement"]) == 1000 * 190
    pairs = Counter(frozenset((e["left"], e["right"])) for e in design["arrangement"])
    assert len(pairs) == 190
    assert set(pairs.values()) == {1000}
    result = verify_run(tmp_path / "big")
    assert not [d for d in result.differences if "design.json" in d.where]


def test_a_candidates_design_is_not_derived_without_some_comparisons(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert invoke("design", run, "--prompts", prompts_file(tmp_path, 3), *FOUR).exit_code == 0
    new = tmp_path / "new"
    result = invoke("design", new, "--from", run, "--drop-trial", "2")
    one_line_refusal(result, new, "several candidates cannot be made again")


def test_a_reference_directory_gives_the_prompts_of_a_candidates_design(
    invoke: Invoke, tmp_path: Path
) -> None:
    dirs = candidate_dirs(tmp_path, ("v1", "v2", "v3"))
    reference = tmp_path / "reference"
    reference.mkdir()
    for i in range(1, 5):  # q0 has no reference: dropped, and named
        (reference / f"q{i}.md").write_text(f"Write about {i}.\n")
    run = tmp_path / "run"
    result = invoke("design", run, "--from-dirs", *dirs, "--reference", reference)
    assert result.exit_code == 0, result.stderr
    assert "dropped 1 item(s) missing from reference: q0.md" in result.stderr
    design = load(run / "design.json")
    assert [p["text"] for p in design["prompts"]] == [f"Write about {i}." for i in range(1, 5)]
    assert design["source"]["reference"] == str(reference.resolve())


@NEEDS_TOMLLIB
def test_the_sides_file_in_the_formats_doc_makes_a_design(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text()
    block = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    sides = tmp_path / "sides.toml"
    sides.write_text(block)
    path = prompts_file(tmp_path, 3)
    made = blindtest.design(tmp_path / "run", prompts_file=str(path), sides=str(sides), seed="d")
    assert made.design["candidates"] == ["fast", "big"]
    assert made.design["models"]["big"]["extra_params"] == {"reasoning_effort": "low"}
    assert made.design["models"]["fast"]["params"]["temperature"] == 0.3


def test_the_python_api_takes_candidates_as_a_mapping(tmp_path: Path) -> None:
    path = prompts_file(tmp_path, 4)
    made = blindtest.design(
        tmp_path / "run", prompts_file=str(path), candidate={"fast": "m1", "big": "m2"},
        pairs="reference:fast", seed="m",
    )  # fmt: skip
    assert made.design["candidates"] == ["fast", "big"]
    assert made.design["trials"] == 4


# ---------------------------------------------------------------------- the schema


def test_the_schema_takes_the_candidates_shape_and_refuses_mixtures(
    invoke: Invoke, tmp_path: Path
) -> None:
    from blindtest.errors import BadInput

    run = tmp_path / "run"
    assert invoke("design", run, "--prompts", prompts_file(tmp_path, 3), *FOUR).exit_code == 0
    good = load(run / "design.json")
    artifacts.validate(good, "design", "design.json")
    two = load(EXAMPLES / "run" / "design.json")
    artifacts.validate(two, "design", "design.json")

    def refused(document: Any) -> None:
        with pytest.raises(BadInput):
            artifacts.validate(document, "design", "design.json")

    refused({**good, "protocol": "triangle"})
    refused({**good, "controls": 1})
    refused({k: v for k, v in good.items() if k != "pairing"})
    refused({**good, "pairing": {"version": "blindtest/pairing@1", "mode": "some"}})
    refused({**good, "arrangement": [{**good["arrangement"][0], "right": "bad name"}]})
    refused(
        {**good, "arrangement": [{k: v for k, v in good["arrangement"][0].items() if k != "right"}]}
    )
    refused({**two, "pairing": good["pairing"]})
    refused({**two, "arrangement": [{**two["arrangement"][0], "right": "B"}]})
    refused({**two, "models": {**two["models"], "C": two["models"]["A"]}})


def test_the_token_estimate_counts_what_bt_generate_sends(tmp_path: Path) -> None:
    """The plan counts each candidate's requests as bt-generate builds them (system prompt,
    length band, template), once per prompt it answers, and the output figure bt-generate
    assumes without a token limit."""
    from blindtest.designing.candidate_plan import ASSUMED_OUTPUT_TOKENS, plan_candidates
    from blindtest.generation import cost
    from blindtest.generation.requests import messages_for
    from blindtest.model.prompt_size import estimated_tokens

    assert ASSUMED_OUTPUT_TOKENS == cost.ASSUMED_OUTPUT_TOKENS
    sides = [
        {"name": "x", "model": "m1", "system": "Be very brief indeed.", "max_tokens": 30},
        {"name": "y", "model": "m2", "template": "Please answer this: {prompt}"},
        {"name": "z", "model": "m3"},
    ]
    path = prompts_file(tmp_path, 7)
    made = blindtest.design(
        tmp_path / "run", prompts_file=str(path), sides=sides, pairs="sample:1", seed="t",
        length_band="50..80",
    )  # fmt: skip
    design = made.design
    plan = plan_candidates(design)
    for c in plan.candidates:
        ids = {e["prompt_id"] for e in design["arrangement"] if c.name in (e["left"], e["right"])}
        texts = {p["id"]: p["text"] for p in design["prompts"]}
        sent = sum(
            estimated_tokens(
                "\n".join(m["content"] for m in messages_for(design, texts[i], c.name))
            )
            for i in ids
        )
        assert c.answers == len(ids)
        assert c.input_tokens == sent
        limit = 30 if c.name == "x" else ASSUMED_OUTPUT_TOKENS
        assert c.output_tokens == len(ids) * limit
        assert c.assumed_output == (c.name != "x")
    assert plan.comparisons == 7
    assert plan.answers == 14


# ---------------------------------------------------------------------- any seed, any mode


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(2, 8),
    n=st.integers(1, 12),
    seed=st.text(min_size=1, max_size=12),
    kind=st.sampled_from(["all", "reference", "sample"]),
    pick=st.integers(0, 100),
    cap=st.one_of(st.none(), st.integers(1, 200)),
)
def test_any_design_holds_exactly_the_schedule(
    k: int, n: int, seed: str, kind: str, pick: int, cap: int | None
) -> None:
    from blindtest.designing.build import DesignOptions, ModelSpec
    from blindtest.model.prompts import Prompt

    names = [f"c{i}" for i in range(k)]
    mode = {
        "all": "all",
        "reference": f"reference:{names[pick % k]}",
        "sample": f"sample:{1 + pick % (k * (k - 1) // 2)}",
    }[kind]
    prompts = [Prompt(id=f"p{i}", text=f"text {i}", line=i + 1) for i in range(n)]
    candidates = tuple((name, ModelSpec(f"model-{name}")) for name in names)
    expected = pairing.schedule(names, n, mode, seed, trials=cap)
    options = DesignOptions(
        a=candidates[0][1], b=candidates[1][1], seed=seed, protocol="preference",
        trials=len(expected), candidates=candidates, pairs=mode,
    )  # fmt: skip
    design = build_design(
        prompts, options, {"blindtest": "x", "python": "x", "packages": {}, "git": None}
    )
    assert design["trials"] == len(design["arrangement"]) == len(expected)
    assert design["arrangement"] == [
        {"trial": t, "prompt_id": f"p{c.prompt}", "left": c.left, "right": c.right}
        for t, c in enumerate(expected, start=1)
    ]
    artifacts.validate(design, "design", "design.json")
