"""Several-candidate runs for tests: a two-sided preference design from bt-design, rewritten
to the several-candidate shape (``candidates``, ``pairing``, ``models`` per name, the
arrangement from ``pairing.schedule`` naming left and right, ``trials``).

* ``candidates_design(two_sided, models, mode)``: the rewritten design (a new dict).
* ``candidates_dirs_design(two_sided, dirs)``: the same for a --from-dirs design, one
  directory per candidate.
* ``make_candidate_run(invoke, run, simulator, tmp_path, ...)``: bt-design a preference design
  on the simulator, rewrite it with four candidates (``CANDIDATES``) and write it to RUN with
  its hash.
* ``offline_candidate_run(root, ...)`` and ``add_candidate_answers(run, text)``: the same
  without the simulator, answers written as given.
* ``accept_design(run)``: let this process read RUN's design even where the design schema does
  not know candidates yet (``python tests/candidate_runs.py accept RUN -- ARGS`` runs the
  blindtest command line in a process that accepts it: for tests that kill bt-generate).

Until bt-design writes such designs itself, this is the one way tests make them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from blindtest.model.pairing import PAIRING_VERSION, schedule
from blindtest.rundir import artifacts

#: Four candidates on the simulator's two answering models: two differ by model, the other
#: two by system prompt and temperature.
CANDIDATES: dict[str, dict[str, Any]] = {
    "alpha": {"model": "sim-large"},
    "beta": {"model": "sim-small"},
    "gamma": {"model": "sim-large", "system": "Answer as a careful engineer would."},
    "delta": {"model": "sim-small", "params": {"max_tokens": None, "temperature": 0.5}},
}


def candidates_design(
    two_sided: Mapping[str, Any],
    models: Mapping[str, Mapping[str, Any]],
    mode: str = "all",
    trials: int | None = None,
) -> dict[str, Any]:
    """``two_sided`` (a preference design) rewritten for the candidates ``models`` (name ->
    fields over side A's configuration): every prompt of the design, paired by ``mode``."""
    if two_sided["protocol"] != "preference":
        raise ValueError("a several-candidate design is a preference design")
    design = {key: value for key, value in two_sided.items()}
    base = dict(two_sided["models"]["A"])
    names = list(models)
    design["candidates"] = names
    design["pairing"] = {"version": PAIRING_VERSION, "mode": mode}
    design["models"] = {name: {**base, **dict(models[name])} for name in names}
    prompts = design["prompts"]
    comparisons = schedule(names, len(prompts), mode, str(design["seed"]), trials=trials)
    design["arrangement"] = [
        {
            "trial": number,
            "prompt_id": prompts[comparison.prompt]["id"],
            "left": comparison.left,
            "right": comparison.right,
        }
        for number, comparison in enumerate(comparisons, start=1)
    ]
    design["trials"] = len(comparisons)
    strip = design["normalization"]["identity_strip"]
    if strip is not None:  # every candidate's model name (and label) is stripped
        terms = list(strip["terms"])
        for spec in design["models"].values():
            for term in (spec["model"], spec.get("label")):
                if term and term not in terms:
                    at = next((i for i, t in enumerate(terms) if len(t) < len(term)), len(terms))
                    terms.insert(at, term)
        design["normalization"] = {
            **design["normalization"],
            "identity_strip": {**strip, "terms": terms},
        }
    return design


def candidates_dirs_design(
    two_sided: Mapping[str, Any], dirs: Mapping[str, Path], mode: str = "all"
) -> dict[str, Any]:
    """``two_sided`` (a --from-dirs preference design) rewritten for the candidate
    directories ``dirs`` (name -> directory holding one file per item of the design)."""
    design = candidates_design(
        two_sided, {name: {"model": name, "dir": str(path)} for name, path in dirs.items()}, mode
    )
    design["models"] = {name: {"model": name, "dir": str(path)} for name, path in dirs.items()}
    files = {
        item: {
            name: {"0": artifacts.sha256_bytes((Path(path) / item).read_bytes())}
            for name, path in dirs.items()
        }
        for item in two_sided["source"]["files"]
    }
    design["source"] = {
        **two_sided["source"],
        "dirs": {name: str(path) for name, path in dirs.items()},
        "files": files,
    }
    return design


def write_design(run: Path, design: Mapping[str, Any]) -> str:
    """Write ``design`` to RUN (design.json and design.sha256) and let this process read it."""
    run.mkdir(parents=True, exist_ok=True)
    data = artifacts.dump_json(design)
    digest = artifacts.sha256_bytes(data)
    (run / artifacts.DESIGN).write_bytes(data)
    (run / artifacts.DESIGN_HASH).write_text(digest + "\n")
    accept_design(run)
    return digest


def accept_design(run: Path) -> None:
    """Let this process read RUN's design: the schema checks it, and where the schema refuses
    only because it does not know candidates yet (bt-design's schema lands apart), the design
    is taken as checked. Any other refusal is raised."""
    from blindtest.rundir.artifacts import documents
    from blindtest.rundir.artifacts.validation import fast_validator, validate

    data = (run / artifacts.DESIGN).read_bytes()
    record = orjson.loads(data)
    if fast_validator("design").is_valid(record):
        return
    if "candidates" not in record:
        validate(record, "design", artifacts.DESIGN, parsed=True)  # raises, naming the field
        return
    # (jsonschema's message for a 45,000-comparison design takes many seconds: not asked for.)
    documents._VALID_DOCUMENTS.add(("design", artifacts.sha256_bytes(data)))


def make_candidate_run(
    invoke: Callable[..., Any],
    run: Path,
    simulator: Any,
    tmp_path: Path,
    *,
    prompts: int = 5,
    mode: str = "all",
    models: Mapping[str, Mapping[str, Any]] | None = None,
    extra: Sequence[str] = (),
    seed: str = "cands",
) -> dict[str, Any]:
    """A several-candidate design on the simulator in RUN: ``prompts`` prompts, paired by
    ``mode``, the candidates ``models`` (default ``CANDIDATES``); returns the design."""
    source = tmp_path / f"{run.name}-two-sided"
    prompt_path = tmp_path / f"{run.name}-prompts.txt"
    prompt_path.write_text(
        "".join(
            f"Question {n}: explain topic number {n} in a few sentences.\n"
            for n in range(1, prompts + 1)
        )
    )
    result = invoke(
        "design", source, "--prompts", prompt_path, "--protocol", "preference",
        "--a", "sim-large", "--b", "sim-small",
        "--a-url", simulator.base_url, "--b-url", simulator.base_url,
        "--seed", seed, "--trials", prompts, *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    two_sided = artifacts.load_design(source).design
    design = candidates_design(two_sided, models or CANDIDATES, mode)
    write_design(run, design)
    return design


def offline_candidate_run(
    root: Path,
    names: Sequence[str] = tuple(CANDIDATES),
    *,
    prompts: int = 8,
    mode: str = "all",
    name: str = "run",
    prompts_list: Sequence[Any] | None = None,
    **options: Any,
) -> tuple[Path, dict[str, Any]]:
    """A several-candidate design without the simulator (``report_runs.make_design``, a
    preference design of ``prompts`` prompts, ``prompts_list`` when given; ``options`` go to
    its ``DesignOptions``),
    candidate NAME answering as model ``model-NAME``; written to ROOT/NAME."""
    from report_runs import make_design

    two_sided = make_design("preference", prompts, prompts=prompts_list, **options)
    models = {n: {"model": f"model-{n}"} for n in names}
    design = candidates_design(two_sided, models, mode)
    run = root / name
    write_design(run, design)
    return run, design


def add_candidate_answers(
    run: Path, text: Callable[[str, str], str], finish_reason: str = "stop"
) -> list[dict[str, Any]]:
    """responses.jsonl (each candidate's answer to each prompt, at the slot that owns it:
    ``text(prompt_id, name)``) and trials.jsonl (the blinded view, read through the owners)."""
    from blindtest.model.slots import SlotState, build_trials_view, plan_slots

    from report_runs import response_row

    design = artifacts.load_design(run).design
    rows = [
        response_row(design, slot, text(slot.prompt_id, slot.side), finish_reason)
        for slot in plan_slots(design)
    ]
    artifacts.write_jsonl(run / artifacts.RESPONSES, rows, "responses", force=False)
    trials = build_trials_view(design, SlotState.from_rows(rows))
    artifacts.write_jsonl(run / artifacts.TRIALS, trials, "trials", force=False)
    return rows


def _main(argv: list[str]) -> None:
    """``candidate_runs.py accept RUN -- ARGS...``: blindtest ARGS in a process that reads
    RUN's several-candidate design."""
    if len(argv) < 3 or argv[0] != "accept" or "--" not in argv:
        raise SystemExit("usage: candidate_runs.py accept RUN -- ARGS...")
    accept_design(Path(argv[1]))
    from blindtest.cli import cli

    rest = argv[argv.index("--") + 1 :]
    cli.main(rest, prog_name="blindtest")


if __name__ == "__main__":
    _main(sys.argv[1:])
