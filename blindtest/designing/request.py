"""bt-design's options as given (`DesignRequest`, ``None`` where not given) resolved into what
`blindtest.designing.build.build_design` takes: defaults filled in, each side's own options over the
shared ones, the prompts loaded (a file, the demo set, or directories of outputs), and the
normalization checked. Refuses options that do not go together; calls no model.

Several candidates (``candidate``: ``NAME=MODEL`` each; ``sides``: a file of full side
configurations, :mod:`blindtest.designing.sides_file`; or ``from_dirs`` with three or more
directories,
or two with ``pairs``) make a several-candidate design (:mod:`blindtest.model.candidates`): the
shared options (temperature, max tokens, system, ``url``, ``key_env``) apply to every
candidate, the per-side ``a_*``/``b_*`` options are refused, the protocol is preference and
``trials`` caps the comparisons (default: every comparison ``pairs`` gives).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from blindtest.designing.build import (
    DEFAULT_KEY_ENV,
    DesignOptions,
    LaunderSpec,
    ModelSpec,
    Normalization,
    check_key_env,
    check_url,
)
from blindtest.designing.decision import DecisionSpec, champion_side, decision_spec
from blindtest.designing.sides_file import SideEntry, read_sides_file
from blindtest.errors import BadInput, message_of, option
from blindtest.model import pairing
from blindtest.model.identity import read_terms_file
from blindtest.model.normalize import LAUNDER_PROMPT, length_band_instruction, parse_length_band
from blindtest.model.prompts import Prompt, demo_prompts, load_prompts
from blindtest.model.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from blindtest.model.rng import fresh_seed
from blindtest.model.sides import parse_params, read_text_option
from blindtest.transport.addresses import DEFAULT_BASE_URL

__all__ = [
    "DEFAULT_TRIALS",
    "DEMO_BASE_URL",
    "DEMO_MODELS",
    "DesignRequest",
    "ResolvedDesign",
    "default_key_env",
    "resolve_request",
]

#: With --demo and no models named, the design points at the bundled local simulator.
DEMO_MODELS = ("sim-large", "sim-small")
DEMO_BASE_URL = "http://127.0.0.1:8765/v1"
#: Trials of a two-sided design when --trials is not given.
DEFAULT_TRIALS = 20


@dataclass(frozen=True, slots=True)
class DesignRequest:
    """bt-design's options as given (``None`` where not given), before any default or check."""

    model_a: str | None = None
    model_b: str | None = None
    prompts_file: Path | None = None
    demo: bool = False
    a_url: str | None = None
    b_url: str | None = None
    a_key_env: str | None = None
    b_key_env: str | None = None
    temperature: float = 1.0
    max_tokens: int | None = None
    system: str | None = None
    #: None: triangle for two sides, preference with candidates.
    protocol: str | None = None
    #: None: 20 for two sides; with candidates, every comparison the pairing gives.
    trials: int | None = None
    seed: str | None = None
    alpha: float = 0.05
    sequential: bool = False
    similarity_pd0: float | None = None
    #: Preference: the position gate's margin on the left share (None: the analysis default).
    position_margin: float | None = None
    strip_formatting: bool = False
    length_band: str | None = None
    truncate_match: bool = False
    launder: str | None = None
    launder_url: str | None = None
    launder_key_env: str | None = None
    strip_identity: bool = True
    strip_identity_words: Path | None = None
    question: str | None = None
    extra_questions: tuple[str, ...] = ()
    extra_questions_per_option: tuple[str, ...] = ()
    require_reason: bool | None = None
    #: Two directories: a two-sided design (unless ``pairs`` is given); three or more: one
    #: candidate each.
    from_dirs: tuple[Path, ...] | None = None
    reference: Path | None = None
    # Per-side options (None / empty: the shared option, or the default).
    a_system: str | None = None
    b_system: str | None = None
    a_template: str | None = None
    b_template: str | None = None
    a_temperature: float | None = None
    b_temperature: float | None = None
    a_max_tokens: int | None = None
    b_max_tokens: int | None = None
    a_param: tuple[str, ...] = ()
    b_param: tuple[str, ...] = ()
    a_label: str | None = None
    b_label: str | None = None
    #: Hidden control trials (preference).
    controls: int = 0
    #: Several candidates: ``NAME=MODEL`` each (--candidate), in the order given.
    candidate: tuple[str, ...] = ()
    #: Several candidates as full side configurations: a .json or .toml file (--sides), or
    #: the same document already parsed (the Python API).
    sides: Path | Sequence[Any] | Mapping[str, Any] | None = None
    #: Who meets whom with candidates: all, reference:NAME, sample:M (None: all).
    pairs: str | None = None
    #: The base URL and key variable every candidate shares (None: the defaults).
    url: str | None = None
    key_env: str | None = None
    #: People judge this many prompts, drawn from the seed; an LLM judge judges every one
    #: (:mod:`blindtest.model.people_sample`). None: people judge every comparison.
    people_sample: int | None = None
    #: ``"tag"``: the sample stratified by each prompt's first tag (None: uniform).
    people_sample_by: str | None = None
    #: The LLM judge's prediction of a comparison: ``"verdict"`` or ``"confidence"``.
    judge_prediction: str | None = None
    #: A sampled comparison left without a people's judgement: ``"void"`` or ``"bound"``.
    people_missing: str | None = None
    #: A pre-registered decision (:mod:`blindtest.designing.decision`): --decide RULE, the
    #: champion (None: side A, or the reference of reference:NAME), the estimand, the
    #: planning values and the planted comparisons of the sensitivity check.
    decide: str | None = None
    champion: str | None = None
    estimand: str | None = None
    plan_true: float | None = None
    plan_ties: float | None = None
    sensitivity: int = 0


@dataclass(frozen=True, slots=True)
class ResolvedDesign:
    """What ``build_design`` takes, and the items --from-dirs dropped (by candidate)."""

    prompts: list[Prompt]
    options: DesignOptions
    dropped: dict[str, list[str]]


def _refuse_candidate_options(r: DesignRequest) -> None:
    """A two-sided design: --pairs belongs to candidates, --from-dirs needs two or more."""
    if r.pairs is not None:
        raise BadInput(
            f"{option('pairs')} goes with several candidates ({option('candidate', 'NAME=MODEL')} "
            f"..., {option('sides', 'FILE')} or {option('from_dirs', 'DIR...')}); drop "
            f"{option('pairs')}"
        )
    if r.from_dirs is not None and len(r.from_dirs) != 2:
        raise BadInput(
            f"{option('from_dirs')} takes two directories or more (one per candidate), got "
            f"{len(r.from_dirs)}"
        )


def default_key_env(side: str) -> str:
    """``BLINDTEST_<SIDE>_KEY`` when it is set, else ``OPENAI_API_KEY`` (the name, not the key)."""
    specific = f"BLINDTEST_{side}_KEY"
    return specific if os.environ.get(specific) else DEFAULT_KEY_ENV


def resolve_request(request: DesignRequest) -> ResolvedDesign:
    """Defaults filled in and the prompts loaded; refuses (BadInput) options that do not go
    together. ``build_design`` checks the rest."""
    r = request
    if r.from_dirs is not None and not r.from_dirs:  # the command's "not given"
        r = replace(r, from_dirs=None)
    if _wants_candidates(r):
        return _resolve_candidates(r)
    _refuse_candidate_options(r)
    source: dict[str, Any] | None = None
    dropped: dict[str, list[str]] = {}
    model_a, model_b, a_url, b_url = r.model_a, r.model_b, r.a_url, r.b_url
    if r.from_dirs:
        prompts, source, dropped, (model_a, model_b) = _from_dirs(r)
    elif r.reference is not None:
        raise BadInput(f"{option('reference')} goes with {option('from_dirs', 'DIR_A DIR_B')}")
    if r.demo and model_a is None and model_b is None:
        model_a, model_b = DEMO_MODELS
        a_url = a_url or DEMO_BASE_URL
        b_url = b_url or DEMO_BASE_URL
    if model_a is None or model_b is None:
        raise BadInput(
            f"name both models: {option('model_a', 'MODEL')} {option('model_b', 'MODEL')}"
        )
    if not r.from_dirs:
        prompts = _load_prompts(r.prompts_file, r.demo)

    def side(side: str, model: str, url: str | None, key_env: str | None) -> ModelSpec:
        url = url or r.url or DEFAULT_BASE_URL
        return _side_spec(r, side, model, url, key_env or r.key_env or default_key_env(side))

    a = side("A", model_a, a_url, r.a_key_env)
    b = side("B", model_b, b_url, r.b_key_env)
    protocol = r.protocol or DEFAULT_PROTOCOL
    labels = [("A", (a.label, a.model)), ("B", (b.label, b.model))]
    options = DesignOptions(
        a=a,
        b=b,
        seed=r.seed if r.seed is not None else fresh_seed(),
        protocol=protocol,
        trials=DEFAULT_TRIALS if r.trials is None else r.trials,
        source=source,
        **_shared_options(r),
        controls=r.controls,
        decision=_decision(r, protocol, labels),
    )
    return ResolvedDesign(prompts, options, dropped)


def _decision(
    r: DesignRequest, protocol: str, labels: Sequence[tuple[str, Sequence[str | None]]]
) -> DecisionSpec | None:
    """--decide and its companions; the champion resolved to a side (BadInput otherwise).
    With --decide on a preference design, --sequential pre-registers a sequential decision
    (the triangle's e-process is what --sequential means without it)."""
    if r.decide is None and r.champion is not None:
        raise BadInput(
            f"{option('champion')} goes with {option('decide')} RULE; add {option('decide')} or "
            f"drop {option('champion')}"
        )
    if r.protocol is not None and r.protocol not in PROTOCOLS:
        return None  # check_options names the protocol
    return decision_spec(
        decide=r.decide,
        protocol=protocol,
        champion=champion_side(r.champion, labels),
        estimand=r.estimand,
        plan_true=r.plan_true,
        plan_ties=r.plan_ties,
        sensitivity=r.sensitivity,
        sequential=r.sequential and r.decide is not None and PROTOCOLS[protocol].prefers,
        people_sample=r.people_sample is not None,
    )


def _side_spec(r: DesignRequest, side: str, model: str, url: str, key_env: str) -> ModelSpec:
    """One side's configuration: its own options where given, else the shared ones."""
    lower = side.lower()

    def own(name: str) -> Any:
        return getattr(r, f"{lower}_{name}")

    temperature = own("temperature")
    max_tokens = own("max_tokens")
    system = own("system")
    params = parse_params(option(f"{lower}_param"), own("param"))
    return ModelSpec(
        model,
        url,
        key_env,
        temperature=r.temperature if temperature is None else temperature,
        max_tokens=r.max_tokens if max_tokens is None else max_tokens,
        label=own("label"),
        system=None if system is None else read_text_option(option(f"{lower}_system"), system),
        template=own("template"),
        extra_params=tuple(params.items()),
    )


def _load_prompts(prompts_file: Path | None, demo: bool) -> list[Prompt]:
    if (prompts_file is None) == (not demo):
        raise BadInput(
            f"give exactly one of {option('prompts_file', 'FILE')}, {option('demo', True)} or "
            f"{option('from_dirs', 'A B')}"
        )
    return demo_prompts() if prompts_file is None else load_prompts(prompts_file)


def _from_dirs(
    r: DesignRequest,
) -> tuple[list[Prompt], dict[str, Any], dict[str, list[str]], tuple[str, str]]:
    """Prompts, the design's source record, the dropped items and the candidate names."""
    from blindtest.model.outputs import check_triangle_variants, load_dirs

    assert r.from_dirs is not None
    given = {
        option("prompts_file"): r.prompts_file,
        option("demo", True): r.demo or None,
        option("model_a"): r.model_a,
        option("model_b"): r.model_b,
    }
    others = [name for name, value in given.items() if value is not None]
    if others:
        raise BadInput(
            f"{option('from_dirs')} takes its items and names from the directories; drop "
            f"{others[0]}"
        )
    source = load_dirs(r.from_dirs[0], r.from_dirs[1], r.reference)
    rules = PROTOCOLS.get(r.protocol or DEFAULT_PROTOCOL)
    if rules is not None and rules.repeats_side:
        check_triangle_variants(source)
    return source.prompts(), source.record(), source.dropped, (source.a.name, source.b.name)


def _normalization(r: DesignRequest) -> Normalization:
    if r.launder is None and (r.launder_url is not None or r.launder_key_env is not None):
        given = option("launder_url" if r.launder_url is not None else "launder_key_env")
        raise BadInput(
            f"{given} goes with {option('launder', 'MODEL')}; add {option('launder')} or drop "
            f"{given}"
        )
    if r.strip_identity_words is not None and not r.strip_identity:
        raise BadInput(
            f"{option('strip_identity_words')} goes with identity stripping; drop "
            f"{option('strip_identity', False)} or drop {option('strip_identity_words')}"
        )
    words = () if r.strip_identity_words is None else read_terms_file(r.strip_identity_words)
    band = None
    if r.length_band is not None:
        try:
            band = parse_length_band(r.length_band)
        except ValueError as error:
            raise BadInput(f"{option('length_band')}: {error}") from None
    spec = None
    if r.launder is not None:
        launder_url = r.launder_url or DEFAULT_BASE_URL
        check_url(option("launder_url"), launder_url, option("launder_key_env"))
        spec = LaunderSpec(
            model=r.launder,
            base_url=launder_url,
            key_env=r.launder_key_env or default_key_env("LAUNDER"),
            prompt=LAUNDER_PROMPT,
        )
    return Normalization(
        strip_formatting=r.strip_formatting,
        truncate_match=r.truncate_match,
        length_band=band,
        length_band_instruction=length_band_instruction(*band) if band else None,
        launder=spec,
        identity_strip=r.strip_identity,
        identity_words=tuple(words),
    )


# --------------------------------------------------------------------------- several candidates

#: The per-side options of a two-sided design (refused with candidates: each candidate's own
#: settings go in --sides FILE).
_PER_SIDE = tuple(
    f"{side}_{name}"
    for side in ("a", "b")
    for name in ("url", "key_env", "system", "template", "temperature", "max_tokens", "label")
)


def _wants_candidates(r: DesignRequest) -> bool:
    """--candidate, --sides, --from-dirs with three or more directories, or two with --pairs."""
    dirs = len(r.from_dirs) if r.from_dirs is not None else 0
    return bool(r.candidate) or r.sides is not None or dirs > 2 or (dirs == 2 and bool(r.pairs))


def _refuse_two_sided_options(r: DesignRequest) -> None:
    """One line for an option that names side A or B, or that a candidates design lacks."""
    if r.model_a is not None or r.model_b is not None:
        given = option("model_a" if r.model_a is not None else "model_b")
        raise BadInput(
            f"{given} names a side of a two-sided design; with candidates name every model "
            f"with {option('candidate', 'NAME=MODEL')} (or {option('sides', 'FILE')}): drop "
            f"{option('model_a')} and {option('model_b')}"
        )
    for name in _PER_SIDE:
        if getattr(r, name) is not None:
            raise BadInput(
                f"{option(name)} sets one side of a two-sided design; with candidates give "
                f"each candidate's own settings in {option('sides', 'FILE')}, or drop "
                f"{option(name)}"
            )
    for name in ("a_param", "b_param"):
        if getattr(r, name):
            raise BadInput(
                f"{option(name)} sets one side of a two-sided design; with candidates put "
                f"request fields in {option('sides', 'FILE')} (extra_params)"
            )
    rules = None if r.protocol is None else PROTOCOLS.get(r.protocol)
    if r.protocol is not None and (rules is None or not rules.prefers):
        raise BadInput(
            "several candidates are ranked from preferences: "
            f"{option('protocol', r.protocol)} is refused with candidates; drop "
            f"{option('protocol')} or use {option('protocol', 'preference')}"
        )
    if r.controls:
        raise BadInput(
            f"{option('controls')} is refused with candidates: a hidden control shows one side "
            f"of a two-sided design ({option('model_a')} and {option('model_b')}) twice, and a "
            "design of named candidates asks each candidate one answer per prompt; drop "
            f"{option('controls')}"
        )


def _candidate_specs(r: DesignRequest) -> list[tuple[str, ModelSpec]]:
    """--candidate NAME=MODEL (the shared options for all) or --sides FILE, in order."""
    url = r.url or DEFAULT_BASE_URL
    key_env = r.key_env or default_key_env("A")
    check_url(option("url"), url, option("key_env"))
    check_key_env(option("key_env"), key_env)
    if r.candidate and r.sides is not None:
        raise BadInput(
            f"give the candidates once: {option('candidate', 'NAME=MODEL')} ... or "
            f"{option('sides', 'FILE')}"
        )
    if r.candidate:
        specs = []
        for item in r.candidate:
            name, sep, model = item.partition("=")
            if not sep or not name.strip() or not model.strip():
                raise BadInput(
                    f"{option('candidate', repr(item))}: give NAME=MODEL, e.g. "
                    f"{option('candidate', 'fast=gpt-5.4-mini')}"
                )
            spec = ModelSpec(
                model.strip(), url, key_env, temperature=r.temperature, max_tokens=r.max_tokens
            )
            specs.append((name.strip(), spec))
        return specs
    assert r.sides is not None
    return [(entry.name, _entry_spec(r, entry, url, key_env)) for entry in _sides(r.sides)]


def _sides(sides: Path | Sequence[Any] | Mapping[str, Any]) -> list[SideEntry]:
    if isinstance(sides, Path):
        return read_sides_file(sides)
    if isinstance(sides, Mapping):
        return read_sides_file(sides)
    return read_sides_file(list(sides))


def _entry_spec(r: DesignRequest, entry: SideEntry, url: str, key_env: str) -> ModelSpec:
    """One --sides candidate: its own settings, else the shared options."""
    return ModelSpec(
        entry.model,
        entry.base_url or url,
        entry.key_env or key_env,
        temperature=r.temperature if entry.temperature is None else entry.temperature,
        max_tokens=r.max_tokens if entry.max_tokens is None else entry.max_tokens,
        top_p=entry.top_p,
        label=entry.label,
        system=entry.system,
        template=entry.template,
        extra_params=entry.extra_params,
    )


def _dirs_candidates(
    r: DesignRequest,
) -> tuple[list[Prompt], dict[str, Any], dict[str, list[str]], list[tuple[str, ModelSpec]]]:
    """--from-dirs DIR...: one candidate per directory, named by the directory."""
    from blindtest.model.outputs import load_candidate_dirs

    assert r.from_dirs is not None
    if r.candidate or r.sides is not None:
        given = option("candidate" if r.candidate else "sides")
        raise BadInput(
            f"{option('from_dirs')} names the candidates by their directories; drop {given}"
        )
    for flag, value in (
        (option("prompts_file"), r.prompts_file),
        (option("demo", True), r.demo or None),
    ):
        if value is not None:
            raise BadInput(
                f"{option('from_dirs')} takes its items and names from the directories; drop {flag}"
            )
    for name in ("url", "key_env", "max_tokens", "system"):
        if getattr(r, name) is not None:
            raise BadInput(
                f"{option(name)} configures a model; {option('from_dirs')} imports outputs and "
                f"calls none: drop {option(name)}"
            )
    if not pairing.MIN_CANDIDATES <= len(r.from_dirs) <= pairing.MAX_CANDIDATES:
        raise BadInput(
            f"{option('from_dirs')}: {len(r.from_dirs)} directories; a design takes "
            f"{pairing.MIN_CANDIDATES} to {pairing.MAX_CANDIDATES} candidates"
        )
    source = load_candidate_dirs(list(r.from_dirs), r.reference)
    specs = [(name, ModelSpec(name)) for name in source.names()]
    return source.prompts(), source.record(), source.dropped, specs


def _check_count_and_names(specs: list[tuple[str, ModelSpec]]) -> None:
    from blindtest.model.candidates import check_candidate_name

    k = len(specs)
    if not pairing.MIN_CANDIDATES <= k <= pairing.MAX_CANDIDATES:
        raise BadInput(
            f"{k} candidate{'s' if k != 1 else ''}: a design takes {pairing.MIN_CANDIDATES} to "
            f"{pairing.MAX_CANDIDATES}"
        )
    seen: set[str] = set()
    for name, _ in specs:
        try:
            check_candidate_name(name)
        except ValueError as error:
            raise BadInput(message_of(error)) from None
        if name in seen:
            raise BadInput(f"candidate {name!r} is named twice; names must be distinct")
        seen.add(name)


def _cap(names: list[str], prompts: int, pairs: str, trials: int | None) -> int:
    """The comparisons ``build_design`` may take from the schedule: ``--trials``, or without
    it a number no schedule reaches (every pair on every prompt), so the schedule gives all
    it has; ``build_design`` records how many it gave. The mode is parsed here, so a typo is
    refused before the prompts are read; what else the schedule refuses (an unknown
    reference, M out of range) it says itself."""
    try:
        pairing.parse_mode(pairs)
    except ValueError as error:
        raise BadInput(message_of(error)) from None
    k = len(names)
    return prompts * (k * (k - 1) // 2) if trials is None else trials


def _resolve_candidates(r: DesignRequest) -> ResolvedDesign:
    _refuse_two_sided_options(r)
    dropped: dict[str, list[str]] = {}
    source: dict[str, Any] | None = None
    if r.from_dirs is not None:
        prompts, source, dropped, specs = _dirs_candidates(r)
    else:
        if r.reference is not None:
            raise BadInput(f"{option('reference')} goes with {option('from_dirs', 'DIR...')}")
        specs = _candidate_specs(r)
    _check_count_and_names(specs)
    if r.from_dirs is None:
        prompts = _load_prompts(r.prompts_file, r.demo)
    pairs = r.pairs or "all"
    names = [name for name, _ in specs]
    trials = _cap(names, len(prompts), pairs, r.trials)
    mode = pairing.parse_mode(pairs)
    labels = [(name, (spec.label, spec.model)) for name, spec in specs]
    if mode.kind == "reference" and mode.reference in names:
        # The reference is the champion: first in the order the champion is looked up.
        labels.sort(key=lambda item: item[0] != mode.reference)
    options = DesignOptions(
        a=specs[0][1],  # not read with candidates (DesignOptions.candidates)
        b=specs[1][1],
        seed=r.seed if r.seed is not None else fresh_seed(),
        protocol="preference",
        trials=trials,
        source=source,
        **_shared_options(r),
        candidates=tuple(specs),
        pairs=str(mode),
        decision=_decision(r, "preference", labels),
    )
    return ResolvedDesign(prompts, options, dropped)


def _prefers(r: DesignRequest) -> bool:
    default = "preference" if _wants_candidates(r) else DEFAULT_PROTOCOL
    rules = PROTOCOLS.get(r.protocol or default)
    return rules is not None and rules.prefers


#: Every field a DesignRequest takes (the Python API's keyword names).
REQUEST_FIELDS = frozenset(f.name for f in fields(DesignRequest))


def _shared_options(r: DesignRequest) -> dict[str, Any]:
    """The DesignOptions fields a two-sided and a several-candidate design take alike."""
    return {
        "alpha": r.alpha,
        # With --decide on a preference design --sequential is the decision's (_decision).
        "sequential": r.sequential and not (r.decide is not None and _prefers(r)),
        "similarity_pd0": r.similarity_pd0,
        "position_margin": r.position_margin,
        "demo": r.demo,
        "system": read_text_option(option("system"), r.system) if r.system is not None else None,
        "normalization": _normalization(r),
        "question": r.question,
        "extra_questions": r.extra_questions,
        "extra_questions_per_option": r.extra_questions_per_option,
        "require_reason": r.require_reason,
        **_people_options(r),
    }


def _people_options(r: DesignRequest) -> dict[str, Any]:
    """The people's sample (``--people-sample N`` and what goes with it); the options that
    qualify it are refused without it."""
    if r.people_sample is None:
        for name in ("people_sample_by", "judge_prediction", "people_missing"):
            if getattr(r, name) is not None:
                raise BadInput(
                    f"{option(name)} goes with {option('people_sample', 'N')}; add it or drop "
                    f"{option(name)}"
                )
        return {}
    return {
        "people_sample": r.people_sample,
        "people_sample_by": r.people_sample_by or "uniform",
        "judge_prediction": r.judge_prediction or "verdict",
        "people_missing": r.people_missing or "void",
    }
