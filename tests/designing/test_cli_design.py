"""bt-design through the real CLI: exit codes, one-line errors, nothing written on refusal."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from conftest import Invoke, files_in, numbered_prompts

MakeFile = Callable[..., Path]
MODELS = ("--a", "model-a", "--b", "model-b")


def test_design_writes_design_and_hash_and_prints_it(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    run = tmp_path / "run"
    result = invoke(
        "design", run, "--prompts", prompts_file(numbered_prompts(20)), *MODELS, "--seed", "7"
    )
    assert result.exit_code == 0, result.stderr
    data = (run / "design.json").read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert (run / "design.sha256").read_text() == digest + "\n"
    assert result.stdout == f"{digest}  {run / 'design.json'}\n"
    design = orjson.loads(data)
    assert design["seed"] == "7"
    assert design["trials"] == 20
    assert design["models"]["A"]["base_url"] == "https://api.openai.com/v1"


def test_same_inputs_and_seed_give_byte_identical_files(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file(numbered_prompts(25))
    for name in ("one", "two"):
        args = ("design", tmp_path / name, "--prompts", prompts, *MODELS, "--seed", "s")
        assert invoke(*args).exit_code == 0
    for file in ("design.json", "design.sha256"):
        assert (tmp_path / "one" / file).read_bytes() == (tmp_path / "two" / file).read_bytes()


def test_seed_is_fresh_and_recorded_when_not_given(invoke: Invoke, tmp_path: Path) -> None:
    assert invoke("design", tmp_path / "a", "--demo").exit_code == 0
    assert invoke("design", tmp_path / "b", "--demo").exit_code == 0
    seed_a = orjson.loads((tmp_path / "a" / "design.json").read_bytes())["seed"]
    seed_b = orjson.loads((tmp_path / "b" / "design.json").read_bytes())["seed"]
    assert seed_a != seed_b


def test_demo_without_models_points_at_the_local_simulator(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("design", tmp_path / "run", "--demo", "--seed", "1")
    assert result.exit_code == 0, result.stderr
    design = orjson.loads((tmp_path / "run" / "design.json").read_bytes())
    assert design["demo"] is True
    assert design["models"]["A"]["base_url"].startswith("http://127.0.0.1:")


def test_keys_are_named_never_stored(invoke: Invoke, tmp_path: Path) -> None:
    secret = "sk-test-" + "x" * 30
    env = {"OPENAI_API_KEY": secret, "BLINDTEST_B_KEY": secret + "b"}
    result = invoke("design", tmp_path / "run", "--demo", *MODELS, "--seed", "1", env=env)
    assert result.exit_code == 0
    data = (tmp_path / "run" / "design.json").read_bytes()
    assert secret.encode() not in data
    design = orjson.loads(data)
    assert design["models"]["A"]["key_env"] == "OPENAI_API_KEY"
    assert design["models"]["B"]["key_env"] == "BLINDTEST_B_KEY"


BAD_INPUTS: list[tuple[list[str], str | bytes | None, str]] = [
    (["--temperature", "0"], None, "refused at temperature 0 (side A)"),
    (["--trials", "30"], None, "found 25 distinct prompts, need 30"),
    (["--trials", "0"], None, "--trials must be at least 1, got 0"),
    (["--alpha", "0"], None, "--alpha must be in (0, 0.5], got 0.0"),
    (["--alpha", "0.7"], None, "--alpha must be in (0, 0.5], got 0.7"),
    (["--protocol", "abx"], None, "Invalid value for '--protocol'"),
    (["--trials", "many"], None, "Invalid value for '--trials'"),
    (["--length-band", "120..80"], None, "--length-band"),
    (["--similarity", "2"], None, "--similarity must be in (0, 1), got 2.0"),
    (["--no-such-option"], None, "No such option '--no-such-option'"),
    (["--temperature", "3"], None, "--temperature must be in [0, 2], got 3.0"),
    (["--a-url", "ftp://host/v1"], None, "--a-url: 'ftp://host/v1' is not an http(s) URL"),
    (["--b-key-env", "sk-abc123"], None, "--b-key-env: 'sk-abc123' is not an environment"),
    (["--launder", "m", "--launder-url", "nope"], None, "--launder-url: 'nope' is not an http(s)"),
    (["--max-tokens", "0"], None, "Invalid value for '--max-tokens'"),
    (["--seed", ""], None, "--seed must not be empty"),
    ([], "", "no prompts found"),
    ([], "one\ntwo\none\n", "line 3 repeats the prompt on line 1"),
    ([], b"caf\xe9\n", "not UTF-8: byte 0xe9 at offset 3 (line 1)"),
]


@pytest.mark.parametrize(("extra", "content", "message"), BAD_INPUTS)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    invoke: Invoke,
    tmp_path: Path,
    prompts_file: MakeFile,
    extra: list[str],
    content: str | bytes | None,
    message: str,
) -> None:
    prompts = prompts_file(numbered_prompts(25) if content is None else content)
    run = tmp_path / "run"
    result = invoke("design", run, "--prompts", prompts, *MODELS, "--seed", "1", *extra)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("blindtest: error: ")
    assert message in result.stderr
    assert result.stdout == ""
    assert files_in(run) == []


def test_malformed_jsonl_names_the_line(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file('{"prompt": "a"}\n{"prompt": "b"\n', name="p.jsonl")
    result = invoke("design", tmp_path / "run", "--prompts", prompts, *MODELS, "--trials", "1")
    assert result.exit_code == 2
    assert "p.jsonl:2: not valid JSON" in result.stderr
    assert files_in(tmp_path / "run") == []


def test_prompts_and_demo_are_exclusive(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    both = invoke("design", tmp_path / "r", "--demo", "--prompts", prompts_file(["x"]), *MODELS)
    neither = invoke("design", tmp_path / "r", *MODELS)
    for result in (both, neither):
        assert result.exit_code == 2
        assert "give exactly one of --prompts FILE, --demo or --from-dirs A B" in result.stderr


def test_existing_design_is_not_overwritten_without_force(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert invoke("design", run, "--demo", "--seed", "1").exit_code == 0
    before = (run / "design.json").read_bytes()
    again = invoke("design", run, "--demo", "--seed", "2")
    assert again.exit_code == 2
    assert "already exists; use --force" in again.stderr
    assert (run / "design.json").read_bytes() == before
    forced = invoke("design", run, "--demo", "--seed", "2", "--force")
    assert forced.exit_code == 0
    assert (run / "design.json").read_bytes() != before


def test_force_never_replaces_a_design_later_stages_used(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert invoke("design", run, "--demo", "--seed", "1").exit_code == 0
    (run / "responses.jsonl").write_bytes(b"")
    result = invoke("design", run, "--demo", "--seed", "2", "--force")
    assert result.exit_code == 2
    assert "already holds responses.jsonl" in result.stderr


def test_normalization_and_protocol_options_are_recorded(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke(
        "design",
        tmp_path / "run",
        "--demo",
        *MODELS,
        "--seed",
        "1",
        "--strip-formatting",
        "--length-band",
        "80..120",
        "--truncate-match",
        "--launder",
        "rewriter",
        "--protocol",
        "preference",
        "--ask",
        "Is it correct?",
        "--max-tokens",
        "400",
    )
    assert result.exit_code == 0, result.stderr
    design = orjson.loads((tmp_path / "run" / "design.json").read_bytes())
    norm = design["normalization"]
    assert norm["strip_formatting"] is True
    assert norm["truncate_match"] is True
    assert (norm["length_band"]["lo"], norm["length_band"]["hi"]) == (80, 120)
    assert "80" in norm["length_band"]["instruction"]
    assert norm["launder"]["model"] == "rewriter"
    assert norm["launder"]["prompt"]
    assert design["judging"]["extra_questions"] == ["Is it correct?"]
    assert design["models"]["B"]["params"]["max_tokens"] == 400


def test_help_works_with_h(invoke: Invoke) -> None:
    result = invoke("design", "-h")
    assert result.exit_code == 0
    assert "Example" in result.stdout
