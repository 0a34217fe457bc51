"""each side a full configuration (system prompt, template, sampling,
extra parameters, label), recorded in the hashed design, sent per side, shown after the reveal."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.model.sides import sides_summary
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke, files_in, numbered_prompts

V1 = "You are a helpful assistant. Be brief."
V2 = "You are a helpful assistant. Give detailed answers with headings."


def _design_args(simulator: Simulator, tmp_path: Path, *extra: str, trials: int = 8) -> list[Any]:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\n".join(numbered_prompts(trials)) + "\n")
    return [
        "--prompts",
        prompts,
        "--a-url",
        simulator.base_url,
        "--b-url",
        simulator.base_url,
        "--seed",
        "sides",
        "--trials",
        str(trials),
        *extra,
    ]


def _bodies(simulator: Simulator) -> dict[str, list[dict[str, Any]]]:
    """Request bodies by the system prompt they carried (None: none)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for request in simulator.requests:
        body = request.json()
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), None)
        out.setdefault(str(system), []).append(body)
    return out


def test_done_when_same_model_two_system_prompts_runs_end_to_end_and_names_the_labels(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.serve_as = "sim-large"  # a one-model server answering "gpt-x"
    (tmp_path / "v1.txt").write_text(V1 + "\n")
    (tmp_path / "v2.txt").write_text(V2 + "\n")
    run = tmp_path / "run"
    result = invoke(
        "run",
        "gpt-x",
        "gpt-x",
        *_design_args(simulator, tmp_path, trials=12),
        "--a-system",
        f"@{tmp_path / 'v1.txt'}",
        "--b-system",
        f"@{tmp_path / 'v2.txt'}",
        "--a-label",
        "v1",
        "--b-label",
        "v2",
        "--judge",
        "bot:length",
        "--run-dir",
        run,
    )
    assert result.exit_code == 0, result.stderr
    assert "v1 vs v2 (same model, different system prompt)" in result.stdout
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    assert design["models"]["A"]["system"] == V1
    assert design["models"]["B"]["system"] == V2
    assert (design["models"]["A"]["label"], design["models"]["B"]["label"]) == ("v1", "v2")
    report = orjson.loads((run / "report.json").read_bytes())
    assert report["sides"]["summary"] == "v1 vs v2 (same model, different system prompt)"
    assert report["sides"]["A"]["system"] == V1
    # Each side's requests carried its own system prompt, and nothing else differs.
    bodies = _bodies(simulator)
    assert set(bodies) == {V1, V2}
    assert {b["model"] for group in bodies.values() for b in group} == {"gpt-x"}
    # The simulator answers a brief prompt briefly: the test is meaningful (a length bot
    # tells the prompts apart far above chance).
    assert report["correct"] >= 10


def test_per_side_options_land_in_the_design_and_in_each_sides_request_body(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, request_validator: Any
) -> None:
    run = tmp_path / "run"
    result = invoke(
        "design",
        run,
        "--a",
        "sim-large",
        "--b",
        "sim-large",
        *_design_args(simulator, tmp_path, trials=6),
        "--protocol",
        "pair",
        "--system",
        "Shared.",
        "--b-system",
        "Own B.",
        "--b-template",
        "Question: {prompt}\nAnswer plainly.",
        "--a-temperature",
        "0.3",
        "--b-max-tokens",
        "200",
        "--a-param",
        "top_p=0.9",
        "--a-param",
        "reasoning_effort=high",
        "--b-param",
        "temperature=null",
        "--b-param",
        'extra_body={"x": [1, 2]}',
    )
    assert result.exit_code == 0, result.stderr
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    a, b = design["models"]["A"], design["models"]["B"]
    assert a["params"] == {"temperature": 0.3, "max_tokens": None}
    assert a["extra_params"] == {"top_p": 0.9, "reasoning_effort": "high"}
    assert "system" not in a
    assert design["system"] == "Shared."
    assert b["params"] == {"temperature": 1.0, "max_tokens": 200}
    # extra_body's fields go into the body itself, as the openai SDK sends them.
    assert b["extra_params"] == {"temperature": None, "x": [1, 2]}
    assert b["system"] == "Own B."
    assert b["template"] == "Question: {prompt}\nAnswer plainly."
    assert invoke("generate", run, "--quiet").exit_code == 0
    bodies = _bodies(simulator)
    for body in bodies["Shared."]:
        request_validator.validate(body)
        assert body["temperature"] == 0.3
        assert body["top_p"] == 0.9
        assert body["reasoning_effort"] == "high"
        assert not body["messages"][1]["content"].startswith("Question: ")
    for body in bodies["Own B."]:
        assert "temperature" not in body  # removed with temperature=null
        assert body["max_tokens"] == 200
        assert body["x"] == [1, 2]
        assert "extra_body" not in body
        user = body["messages"][1]["content"]
        assert user.startswith("Question: ")
        assert user.endswith("\nAnswer plainly.")
    summary = sides_summary(design)
    assert summary == (
        "sim-large vs sim-large (same model, different system prompt, template, temperature, "
        "token limit and parameters)"
    )


def test_a_design_without_side_options_records_what_it_always_did(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    args = _design_args(simulator, tmp_path)
    assert invoke("design", run, "--a", "m1", "--b", "m2", *args).exit_code == 0
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    for side in ("A", "B"):
        assert set(design["models"][side]) == {"model", "base_url", "key_env", "params"}
    assert sides_summary(design) == "m1 vs m2 (different models)"
    # A label equal to the model name is the default, and not written.
    again = tmp_path / "again"
    labelled = invoke("design", again, "--a", "m1", "--b", "m2", "--a-label", "m1", *args)
    assert labelled.exit_code == 0
    assert (again / artifacts.DESIGN).read_bytes() == (run / artifacts.DESIGN).read_bytes()


BAD = [
    (["--a-template", "Q: {question}"], "--a-template: unknown placeholder {question}"),
    (["--b-template", "no placeholder"], "--b-template: the template has no {prompt}"),
    (["--a-param", "top_p"], "--a-param: 'top_p' is not KEY=VALUE"),
    (["--b-param", "model=other"], "--b-param: 'model' is set by blindtest itself"),
    (["--a-system", "@missing.txt"], "--a-system: missing.txt does not exist"),
    (["--b-temperature", "0"], "refused at temperature 0 (side B)"),
    (["--a-param", "temperature=0"], "refused at temperature 0 (side A)"),
    (["--a-temperature", "3"], "--temperature must be in [0, 2], got 3.0 (side A"),
    (["--b-label", " "], "--b-label is empty"),
    (["--a-param", "extra_body={x:1}"], "--a-param: extra_body={x:1} starts like JSON but is not"),
    (["--b-param", "stop=[a]"], "--b-param: stop=[a] starts like JSON but is not JSON"),
    (["--a-param", 'say="hi'], '--a-param: say="hi starts like JSON but is not JSON'),
    (["--a-param", "extra_body=20"], "--a-param: extra_body must be a JSON object"),
    (["--b-param", 'extra_body={"model": "x"}'], "--b-param: extra_body sets 'model'"),
    (["--a-param", 'extra_body={"temperature": 0}'], "refused at temperature 0 (side A)"),
]


@pytest.mark.parametrize(("extra", "message"), BAD)
def test_02_bad_side_options_exit_2_naming_the_option_and_write_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, extra: list[str], message: str
) -> None:
    run = tmp_path / "run"
    args = _design_args(simulator, tmp_path)
    result = invoke("design", run, "--a", "m", "--b", "m", *args, *extra)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert files_in(run) == [] if run.exists() else True


def test_same_model_two_templates_is_valid_and_temperature_zero_is_per_side(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    args = _design_args(simulator, tmp_path)
    same = ["--a", "m", "--b", "m", *args]
    templates = ["--a-template", "{prompt}", "--b-template", "Answer briefly: {prompt}"]
    assert invoke("design", tmp_path / "t", *same, *templates).exit_code == 0
    design = orjson.loads((tmp_path / "t" / artifacts.DESIGN).read_bytes())
    assert sides_summary(design) == "m vs m (same model, different template)"
    # Temperature 0 on one side only is fine for pair, refused for the triangle (that side).
    zero = ["--a-temperature", "0"]
    assert invoke("design", tmp_path / "p", *same, *zero, "--protocol", "pair").exit_code == 0
    refused = invoke("design", tmp_path / "x", *same, *zero)
    assert refused.exit_code == 2
    assert "(side A)" in refused.stderr
    # A side whose temperature is removed (server default) is not at temperature 0.
    removed = ["--temperature", "0", "--a-param", "temperature=null", "--b-temperature", "0.7"]
    assert invoke("design", tmp_path / "r", *same, *removed).exit_code == 0


def test_identity_terms_name_models_and_labels() -> None:
    from blindtest.model.sides import identity_terms

    design = {
        "models": {
            "A": {"model": "gpt-x", "label": "prompt v2"},
            "B": {"model": "gpt-x"},
        }
    }
    assert identity_terms(design) == ["prompt v2", "gpt-x"]


def test_the_suggested_next_design_keeps_each_sides_configuration(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from blindtest.analysis.wording import _same_design_args

    run = tmp_path / "run"
    extra = ["--a-system", "Be brief.", "--b-label", "v2", "--b-param", "top_p=0.9"]
    extra += ["--a-temperature", "0.5", "--b-param", "reasoning_effort=high"]
    args = _design_args(simulator, tmp_path)
    assert invoke("design", run, "--a", "m", "--b", "m", *args, *extra).exit_code == 0
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    words = _same_design_args(design)
    pairs = set(itertools.pairwise(words))
    assert ("--a-system", "Be brief.") in pairs
    assert ("--b-label", "v2") in pairs
    assert ("--b-param", "top_p=0.9") in pairs
    assert ("--b-param", "reasoning_effort=high") in pairs
    assert ("--a-temperature", "0.5") in pairs
    assert "--temperature" not in words


def test_extra_body_fields_reach_the_server_at_the_top_level_of_the_body(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    args = _design_args(simulator, tmp_path, trials=4)
    made = invoke(
        "design",
        run,
        "--a",
        "sim-large",
        "--b",
        "sim-small",
        *args,
        "--protocol",
        "pair",
        "--a-param",
        'extra_body={"top_k": 20, "chat_template_kwargs": {"enable_thinking": false}}',
        "--a-param",
        "top_k=5",  # extra_body's fields go over the others, as the openai SDK merges them
    )
    assert made.exit_code == 0, made.stderr
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    assert design["models"]["A"]["extra_params"] == {
        "top_k": 20,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    assert invoke("generate", run, "--quiet").exit_code == 0
    bodies = [r.json() for r in simulator.requests]
    a = [b for b in bodies if b["model"] == "sim-large"]
    assert a
    assert all("extra_body" not in b for b in bodies)
    assert all(b["top_k"] == 20 for b in a)
    assert all(b["chat_template_kwargs"] == {"enable_thinking": False} for b in a)
    assert all("top_k" not in b for b in bodies if b["model"] == "sim-small")


def test_a_design_holding_extra_body_sends_its_fields_at_the_top_level() -> None:
    from blindtest.errors import BadInput
    from blindtest.transport.endpoint import Endpoint

    extra = {"top_p": 0.5, "extra_body": {"top_k": 20, "top_p": None}}
    endpoint = Endpoint("http://127.0.0.1:9/v1", "m", extra=extra)
    body = endpoint.request_body([{"role": "user", "content": "hi"}])
    assert body == {"model": "m", "messages": [{"role": "user", "content": "hi"}], "top_k": 20}
    with pytest.raises(BadInput, match="extra_body sets messages, model"):
        Endpoint("http://127.0.0.1:9/v1", "m", extra={"extra_body": {"model": 1, "messages": 2}})


def test_a_param_value_that_is_a_json_string_is_sent_as_that_string(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    args = _design_args(simulator, tmp_path, trials=4)
    made = invoke("design", run, "--a", "m", "--b", "m", *args, "--a-param", 'note="{x:1}"')
    assert made.exit_code == 0, made.stderr
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    assert design["models"]["A"]["extra_params"] == {"note": "{x:1}"}
