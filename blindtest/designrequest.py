"""bt-design's options as given (`DesignRequest`, ``None`` where not given) resolved into what
`blindtest.designing.build_design` takes: defaults filled in, each side's own options over the
shared ones, the prompts loaded (a file, the demo set, or two directories of outputs), and the
normalization checked. Refuses options that do not go together; calls no model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindtest.designing import (
    DEFAULT_KEY_ENV,
    DesignOptions,
    LaunderSpec,
    ModelSpec,
    Normalization,
    check_url,
)
from blindtest.endpoints import DEFAULT_BASE_URL
from blindtest.errors import BadInput
from blindtest.identity import read_terms_file
from blindtest.normalize import LAUNDER_PROMPT, length_band_instruction, parse_length_band
from blindtest.prompts import Prompt, demo_prompts, load_prompts
from blindtest.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from blindtest.rng import fresh_seed
from blindtest.sides import parse_params, read_text_option

__all__ = [
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
    protocol: str = DEFAULT_PROTOCOL
    trials: int = 20
    seed: str | None = None
    alpha: float = 0.05
    sequential: bool = False
    similarity_pd0: float | None = None
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
    from_dirs: tuple[Path, Path] | None = None
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


@dataclass(frozen=True, slots=True)
class ResolvedDesign:
    """What ``build_design`` takes, and the items --from-dirs dropped (by candidate)."""

    prompts: list[Prompt]
    options: DesignOptions
    dropped: dict[str, list[str]]


def default_key_env(side: str) -> str:
    """``BLINDTEST_<SIDE>_KEY`` when it is set, else ``OPENAI_API_KEY`` (the name, not the key)."""
    specific = f"BLINDTEST_{side}_KEY"
    return specific if os.environ.get(specific) else DEFAULT_KEY_ENV


def resolve_request(request: DesignRequest) -> ResolvedDesign:
    """Defaults filled in and the prompts loaded; refuses (BadInput) options that do not go
    together. ``build_design`` checks the rest."""
    r = request
    source: dict[str, Any] | None = None
    dropped: dict[str, list[str]] = {}
    model_a, model_b, a_url, b_url = r.model_a, r.model_b, r.a_url, r.b_url
    if r.from_dirs:
        prompts, source, dropped, (model_a, model_b) = _from_dirs(r)
    elif r.reference is not None:
        raise BadInput("--reference goes with --from-dirs DIR_A DIR_B")
    if r.demo and model_a is None and model_b is None:
        model_a, model_b = DEMO_MODELS
        a_url = a_url or DEMO_BASE_URL
        b_url = b_url or DEMO_BASE_URL
    if model_a is None or model_b is None:
        raise BadInput("name both models: --a MODEL --b MODEL")
    if not r.from_dirs:
        prompts = _load_prompts(r.prompts_file, r.demo)

    def side(side: str, model: str, url: str | None, key_env: str | None) -> ModelSpec:
        return _side_spec(r, side, model, url or DEFAULT_BASE_URL, key_env or default_key_env(side))

    options = DesignOptions(
        a=side("A", model_a, a_url, r.a_key_env),
        b=side("B", model_b, b_url, r.b_key_env),
        seed=r.seed if r.seed is not None else fresh_seed(),
        protocol=r.protocol,
        trials=r.trials,
        alpha=r.alpha,
        sequential=r.sequential,
        similarity_pd0=r.similarity_pd0,
        demo=r.demo,
        system=read_text_option("--system", r.system) if r.system is not None else None,
        normalization=_normalization(r),
        question=r.question,
        extra_questions=r.extra_questions,
        extra_questions_per_option=r.extra_questions_per_option,
        require_reason=r.require_reason,
        source=source,
        controls=r.controls,
    )
    return ResolvedDesign(prompts, options, dropped)


def _side_spec(r: DesignRequest, side: str, model: str, url: str, key_env: str) -> ModelSpec:
    """One side's configuration: its own options where given, else the shared ones."""
    lower = side.lower()

    def own(name: str) -> Any:
        return getattr(r, f"{lower}_{name}")

    temperature = own("temperature")
    max_tokens = own("max_tokens")
    system = own("system")
    params = parse_params(f"--{lower}-param", own("param"))
    return ModelSpec(
        model,
        url,
        key_env,
        temperature=r.temperature if temperature is None else temperature,
        max_tokens=r.max_tokens if max_tokens is None else max_tokens,
        label=own("label"),
        system=None if system is None else read_text_option(f"--{lower}-system", system),
        template=own("template"),
        extra_params=tuple(params.items()),
    )


def _load_prompts(prompts_file: Path | None, demo: bool) -> list[Prompt]:
    if (prompts_file is None) == (not demo):
        raise BadInput("give exactly one of --prompts FILE, --demo or --from-dirs A B")
    return demo_prompts() if prompts_file is None else load_prompts(prompts_file)


def _from_dirs(
    r: DesignRequest,
) -> tuple[list[Prompt], dict[str, Any], dict[str, list[str]], tuple[str, str]]:
    """Prompts, the design's source record, the dropped items and the candidate names."""
    from blindtest.outputs import check_triangle_variants, load_dirs

    assert r.from_dirs is not None
    given = {
        "--prompts": r.prompts_file,
        "--demo": r.demo or None,
        "--a": r.model_a,
        "--b": r.model_b,
    }
    others = [flag for flag, value in given.items() if value is not None]
    if others:
        raise BadInput(
            f"--from-dirs takes its items and names from the directories; drop {others[0]}"
        )
    source = load_dirs(r.from_dirs[0], r.from_dirs[1], r.reference)
    rules = PROTOCOLS.get(r.protocol)
    if rules is not None and rules.repeats_side:
        check_triangle_variants(source)
    return source.prompts(), source.record(), source.dropped, (source.a.name, source.b.name)


def _normalization(r: DesignRequest) -> Normalization:
    if r.launder is None and (r.launder_url is not None or r.launder_key_env is not None):
        given = "--launder-url" if r.launder_url is not None else "--launder-key-env"
        raise BadInput(f"{given} goes with --launder MODEL; add --launder or drop {given}")
    if r.strip_identity_words is not None and not r.strip_identity:
        raise BadInput(
            "--strip-identity-words goes with identity stripping; drop --no-strip-identity "
            "or drop --strip-identity-words"
        )
    words = () if r.strip_identity_words is None else read_terms_file(r.strip_identity_words)
    band = None
    if r.length_band is not None:
        try:
            band = parse_length_band(r.length_band)
        except ValueError as error:
            raise BadInput(f"--length-band: {error}") from None
    spec = None
    if r.launder is not None:
        launder_url = r.launder_url or DEFAULT_BASE_URL
        check_url("--launder-url", launder_url)
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
