"""URLs, --from-dirs paths, prompt and option
refusals. Every refusal exits 2 with one line naming the option or line, writes nothing."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
import yarl

from blindtest.designing.build import parse_url
from blindtest.errors import BadInput
from blindtest.simulator import Simulator
from blindtest.transport.endpoint import Endpoint

from conftest import Invoke, files_in, numbered_prompts

MakeFile = Callable[..., Path]
MODELS = ("--a", "model-a", "--b", "model-b")


def refused(result: object, run: Path, *parts: str) -> None:
    assert result.exit_code == 2, result.stdout  # type: ignore[attr-defined]
    stderr = result.stderr  # type: ignore[attr-defined]
    assert stderr.count("\n") == 1, stderr
    for part in parts:
        assert part in stderr, stderr
    assert files_in(run) == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:99999/v1", "--a-url: 'http://127.0.0.1:99999/v1' has a bad port"),
        ("http://h:0/v1", "a port is a number in 1..65535"),
        ("http://[::1", "unclosed or invalid IPv6 address"),
        ("http://::1:8000/v1", "an IPv6 address goes in brackets"),
        ("http://exa mple/v1", "is not an http(s) URL"),
        ("http://bad%20host/v1", "invalid host name"),
        ("http:///v1", "is not an http(s) URL"),
        ("http://h/v1#frag", "#fragment"),
    ],
)
def test_bad_urls_are_refused_at_design_time(
    invoke: Invoke, tmp_path: Path, url: str, message: str
) -> None:
    run = tmp_path / "run"
    result = invoke("design", run, "--demo", *MODELS, "--seed", "1", "--a-url", url)
    refused(result, run, message)


@pytest.mark.parametrize(
    "url", ["https://user:hunter2@api.example.com/v1", "https://:hunter2@api.example.com/v1"]
)
def test_credentials_in_a_url_are_refused_without_echoing_the_password(
    invoke: Invoke, tmp_path: Path, url: str
) -> None:
    run = tmp_path / "run"
    result = invoke("design", run, "--demo", *MODELS, "--seed", "1", "--b-url", url)
    refused(result, run, "--b-url: a URL with a user name or password", "--b-key-env")
    assert "hunter2" not in result.stderr
    assert "https://api.example.com/v1" in result.stderr


def test_a_key_in_the_query_is_refused_without_echoing_it(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    url = "https://x.openai.azure.com/v1?api-version=2024&api-key=s3cr3t"
    result = invoke("design", run, "--demo", *MODELS, "--seed", "1", "--a-url", url)
    refused(result, run, "'api-key', which looks like a credential")
    assert "s3cr3t" not in result.stderr


def test_launder_url_is_parsed_the_same_way(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ("--launder", "m", "--launder-url", "https://u:pw@h/v1")
    result = invoke("design", run, "--demo", *MODELS, "--seed", "1", *args)
    refused(result, run, "--launder-url: a URL with a user name", "--launder-key-env")


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        ("HTTP://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("Https://API.Example.com/v1/", "https://api.example.com/v1"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
        ("https://h.example/openai?api-version=2024-06-01", None),
        ("https://h.example/v1?deployment=x&design=y", None),
        ("http://bücher.example/v1", None),
        ("http://host_with_underscore:11434/v1", None),
    ],
)
def test_accepted_urls_are_normalised_and_the_client_can_open_them(
    invoke: Invoke, tmp_path: Path, given: str, recorded: str | None
) -> None:
    run = tmp_path / "run"
    result = invoke("design", run, "--demo", *MODELS, "--seed", "1", "--a-url", given)
    assert result.exit_code == 0, result.stderr
    base = orjson.loads((run / "design.json").read_bytes())["models"]["A"]["base_url"]
    assert base == (recorded or given.rstrip("/"))
    endpoint = Endpoint(base, "m")  # what bt-generate builds from the design
    assert yarl.URL(endpoint.url).port is not None
    assert endpoint.origin.startswith("http")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:99999/v1",
        "http://[::1",
        "https://u:p@h/v1",
        "ftp://h/v1",
        "http://h:abc/v1",
        "http://[zz]/v1",
    ],
)
def test_parse_url_is_stricter_than_the_client(url: str) -> None:
    with pytest.raises(BadInput):
        parse_url("--a-url", url)


def test_upper_case_scheme_design_generates_against_the_simulator(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url.replace("http://", "HTTP://")
    args = ("--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url)
    design = invoke("design", run, "--demo", *args, "--seed", "1", "--trials", "2")
    assert design.exit_code == 0, design.stderr
    generate = invoke("generate", run, env={"OPENAI_API_KEY": "unused"})
    assert generate.exit_code == 0, generate.stderr


def test_from_dirs_records_absolute_paths_and_generate_works_from_elsewhere(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    for side in ("model-a", "model-b"):
        (work / side).mkdir(parents=True)
        for i in range(4):
            (work / side / f"q{i}.md").write_text(f"{side} answers {i}\n")
    monkeypatch.chdir(work)
    result = invoke(
        "design", "run", "--from-dirs", "model-a", "model-b", "--protocol", "pair",
        "--trials", "4", "--seed", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    source = orjson.loads((work / "run" / "design.json").read_bytes())["source"]
    assert source["dirs"] == {"A": str(work / "model-a"), "B": str(work / "model-b")}
    assert all(os.path.isabs(p) for p in source["dirs"].values())
    monkeypatch.chdir(tmp_path)
    generated = invoke("generate", work / "run")
    assert generated.exit_code == 0, generated.stderr


def test_txt_file_of_json_lines_is_refused_suggesting_jsonl(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    lines = [orjson.dumps({"prompt": f"question {i}"}).decode() for i in range(25)]
    run = tmp_path / "run"
    result = invoke("design", run, "--prompts", prompts_file(lines), *MODELS, "--seed", "1")
    refused(result, run, "prompts.txt: line 1 is a JSON object", "rename the file to .jsonl")


def test_txt_prompt_that_merely_mentions_json_is_accepted(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    lines = [*numbered_prompts(24), 'Format {"a": 1} as YAML.']
    result = invoke("design", tmp_path / "run", "--prompts", prompts_file(lines), *MODELS)
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
def test_ask_is_refused_outside_preference(invoke: Invoke, tmp_path: Path, protocol: str) -> None:
    run = tmp_path / "run"
    args = ("--protocol", protocol, "--temperature", "1", "--ask", "Is it correct?")
    result = invoke("design", run, "--demo", *MODELS, *args)
    refused(result, run, "--ask is for the preference protocol only", "--protocol preference")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--launder-url", "http://localhost:1/v1"], "--launder-url"),
        (["--launder-key-env", "LAUNDER_KEY"], "--launder-key-env"),
    ],
)
def test_launder_options_without_launder_are_refused(
    invoke: Invoke, tmp_path: Path, args: list[str], option: str
) -> None:
    run = tmp_path / "run"
    result = invoke("design", run, "--demo", *MODELS, *args)
    refused(result, run, f"{option} goes with --launder MODEL")


@pytest.mark.parametrize(
    ("second", "why"),
    [
        ("Explain\u200b recursion briefly.", "zero-width space"),
        ("Explain recursion\u2060 briefly.", "word joiner"),
        ("\ufeffExplain recursion briefly.", "BOM mid-file"),
        ("Explain recursion\u200d briefly.", "zero-width joiner"),
    ],
)
def test_invisible_variants_of_a_prompt_are_duplicates(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile, second: str, why: str
) -> None:
    lines = ["Explain recursion briefly.", *numbered_prompts(24), second]
    run = tmp_path / "run"
    result = invoke("design", run, "--prompts", prompts_file(lines), *MODELS)
    refused(result, run, "line 26 repeats the prompt on line 1", "invisible characters")


def test_nfc_variants_of_a_prompt_are_duplicates(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    lines = ["Describe a caf\u00e9.", *numbered_prompts(24), "Describe a cafe\u0301."]
    run = tmp_path / "run"
    result = invoke("design", run, "--prompts", prompts_file(lines), *MODELS)
    refused(result, run, "line 26 repeats the prompt on line 1")


def test_nul_byte_in_a_prompt_is_refused(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    content = "\n".join([*numbered_prompts(24), "Explain\x00 recursion."]) + "\n"
    run = tmp_path / "run"
    result = invoke("design", run, "--prompts", prompts_file(content), *MODELS)
    refused(result, run, "prompts.txt: line 25 holds a NUL byte")


def test_nul_byte_in_jsonl_prompt_is_refused(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    content = '{"prompt": "a\\u0000b"}\n{"prompt": "c"}\n'
    run = tmp_path / "run"
    result = invoke(
        "design", run, "--prompts", prompts_file(content, name="p.jsonl"), *MODELS, "--trials", "1"
    )
    refused(result, run, "p.jsonl: line 1 holds a NUL byte")


def test_quiet_design_prints_nothing(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = invoke("design", run, "--demo", "-q", "--protocol", "pair", "--trials", "8")
    assert result.exit_code == 0, result.stderr
    assert (result.stdout, result.stderr) == ("", "")
    assert files_in(run) == ["design.json", "design.sha256"]


def test_quiet_from_dirs_design_prints_nothing(invoke: Invoke, tmp_path: Path) -> None:
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        for i in range(3):
            (tmp_path / side / f"q{i}").write_text(f"{side}{i}\n")
    (tmp_path / "a" / "extra").write_text("only in a\n")
    result = invoke(
        "design", tmp_path / "run", "-q", "--from-dirs", tmp_path / "a", tmp_path / "b",
        "--protocol", "pair", "--trials", "3",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert (result.stdout, result.stderr) == ("", "")


def test_a_folder_as_prompts_file_is_named_as_a_directory(invoke: Invoke, tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    run = tmp_path / "run"
    result = invoke("design", run, "--prompts", folder, *MODELS)
    refused(result, run, f"{folder} is a directory; give a .txt or .jsonl file")
    assert "(none)" not in result.stderr


def test_reused_generated_id_says_where_the_id_came_from(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    content = '{"prompt": "a"}\n{"prompt": "b"}\n{"prompt": "c"}\n{"prompt": "d", "id": "p001"}\n'
    run = tmp_path / "run"
    path = prompts_file(content, name="p.jsonl")
    result = invoke("design", run, "--prompts", path, *MODELS, "--trials", "1")
    refused(
        result,
        run,
        "p.jsonl: line 4 gives id 'p001', which line 1 got by default",
        'give every line an explicit "id"',
    )
