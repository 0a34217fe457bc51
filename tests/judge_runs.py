"""Run directories for the bt-judge tests: a real design (``build_design`` + ``write_design``)
and a synthetic, schema-validated trials.jsonl, since bt-generate is not needed to judge.

The synthetic responses make the answer key visible to a reader of the test (never to the
session): in a triangle trial the odd response is longer than the two doubled ones, so the
length bot is always right; in pair and preference runs side A writes more than side B.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from blindtest.designing.build import DesignOptions, ModelSpec, build_design
from blindtest.model.prompts import Prompt
from blindtest.rundir import artifacts
from blindtest.rundir.types import ArrangementEntry

PROVENANCE: dict[str, Any] = {"blindtest": "test", "python": "3", "packages": {}, "git": None}

#: (trial, its arrangement entry) -> the options; tests pass functions of a plain dict too.
Texts = Callable[[int, Any], Sequence[str]]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    """Text as a person sees it on the rendered screen."""
    return _ANSI.sub("", text)


def short_texts(trial: int, entry: Mapping[str, Any]) -> list[str]:
    """Options whose lengths give the answer away (so bots and tests can know it)."""
    if "odd_position" in entry:
        texts = [f"Answer {trial}: a short reply." for _ in range(3)]
        texts[entry["odd_position"] - 1] = f"Answer {trial}: a much longer and chattier reply."
        return texts
    long, short = f"Answer {trial}: the longer side A reply.", f"Answer {trial}: side B."
    return [long, short] if entry["left"] == "A" else [short, long]


def make_run(
    root: Path,
    protocol: str = "triangle",
    trials: int = 20,
    *,
    sequential: bool = False,
    texts: Texts = short_texts,
    prompt: Callable[[int], str] | None = None,
    history: Callable[[int], Sequence[tuple[str, str]]] | None = None,
    name: str = "run",
    **design_options: Any,
) -> Path:
    """Write ``root/name`` with design.json, design.sha256 and trials.jsonl; return it.
    ``history``: trial prompt number -> a conversation's earlier turns (role, content)."""
    run_dir = root / name
    run_dir.mkdir(parents=True)
    prompts = [
        Prompt(
            id=f"p{i:03d}",
            text=prompt(i) if prompt else f"Prompt number {i}?",
            line=i,
            history=tuple(history(i)) if history else (),
        )
        for i in range(1, trials + 1)
    ]
    options = DesignOptions(
        a=ModelSpec("model-a"),
        b=ModelSpec("model-b"),
        seed="judge-tests",
        protocol=protocol,
        trials=trials,
        sequential=sequential,
        **design_options,
    )
    design = build_design(prompts, options, PROVENANCE)
    artifacts.write_design(run_dir, design)
    prompt_of = {p["id"]: p for p in design["prompts"]}
    records = []
    for entry in design["arrangement"]:
        record = prompt_of[entry["prompt_id"]]
        row: dict[str, Any] = {
            "schema": artifacts.schema_tag("trials"),
            "trial": entry["trial"],
            "prompt": record["text"],
            "options": list(texts(entry["trial"], entry)),
        }
        if "messages" in record:  # as bt-generate writes a conversation's earlier turns
            row["history"] = record["messages"][:-1]
        records.append(row)
    artifacts.write_jsonl(run_dir / artifacts.TRIALS, records, "trials", force=False)
    return run_dir


def answer_key(run_dir: Path) -> list[ArrangementEntry]:
    """The arrangement, for tests that need to know which picks are right."""
    return list(artifacts.load_design(run_dir).design["arrangement"])


def picks_of(path: Path) -> list[dict[str, Any]]:
    return artifacts.read_jsonl(path, "picks").records


def write_picks(path: Path, lines: Sequence[dict[str, Any] | str]) -> Path:
    """A picks file from records (tag added) or raw text lines, exactly as given."""
    out = []
    for line in lines:
        if isinstance(line, str):
            out.append(line.encode())
        else:
            record = {"schema": artifacts.schema_tag("picks"), **line}
            out.append(artifacts.dump_line(record).rstrip(b"\n"))
    path.write_bytes(b"\n".join(out) + b"\n")
    return path
