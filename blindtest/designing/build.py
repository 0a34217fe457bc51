"""Build a design: the pre-registered, hashable description of a run. Pure; calls no model.

The arrangement is a pure function of (seed, trials, prompts, protocol), drawn from
``blindtest.model.rng`` streams with fixed labels, so anyone holding the seed can re-derive it:

1. ``"prompts"``: the prompt indices (file order) are Fisher-Yates shuffled; trial ``t`` uses
   the ``t``-th of them, so each prompt is used at most once.
2. triangle, ``"doubled"``: ``n // 2`` trials double A and ``n // 2`` double B; for odd ``n`` one
   extra side is drawn (``randbelow(2)``: 0 = A, 1 = B); the list is then shuffled. Balanced but
   not alternating: a strict A, B, A, B order would let a judge who recognised one trial's
   doubled model infer the next.
3. triangle, ``"odd_position"``: one ``randbelow(3) + 1`` per trial, in trial order, so the odd
   position is uniform on 1..3 and independent of everything else.
4. pair and preference, ``"left"``: the same balanced construction as step 2 for the side
   shown on the left.
5. preference with ``--controls K``: the design's ``trials`` counts every
   comparison shown, ``K`` of them hidden controls (the same model on both sides). Steps 1 and
   4 run over all trials and the real ones as before (with ``K = 0`` the arrangement is exactly
   the old one); then ``"controls"``: the trial numbers 1..trials are shuffled and the first
   ``K`` become controls, and ``"control_sides"``: a balanced list of ``K`` sides (as in step 2)
   says whose two independent draws each control shows. A control entry carries ``control``
   (the side) and ``left`` equal to it; the ``"left"`` sides go, in order, to the real trials.
6. preference with ``--decide ... --sensitivity N`` (:mod:`blindtest.model.planted`): the
   controls as in step 5 (with ``N = 0`` the arrangement is exactly the one above), then
   ``"planted"``: the other trial numbers are shuffled and the first ``N`` carry planted
   comparisons, each marked ``planted: {side, original, degradation}`` with ``left`` the
   champion: the degradation drawn by ``randbelow(3)`` from ``"degradation"`` (cut, drop,
   shuffle) and the original's position from a balanced list (as in step 2) from
   ``"planted_position"`` (A = 1, B = 2), both in trial order; then the ``"left"`` sides go,
   in order, to the real trials.

A design with several candidates (``candidates``, k = 2..20) takes none of the steps above:
its arrangement is :func:`blindtest.model.pairing.schedule` (the seed, the candidates in the order
given, the number of prompts, the pairing mode and the number of comparisons), one entry per
comparison in the order the schedule gives, ``{"trial", "prompt_id", "left", "right"}``
(:func:`build_candidate_arrangement`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from blindtest.designing.decision import DecisionSpec
from blindtest.errors import BadInput, message_of, option
from blindtest.model import pairing
from blindtest.model.candidates import check_candidate_name
from blindtest.model.identity import identity_config
from blindtest.model.normalize import (
    NORMALIZERS_VERSION,
)
from blindtest.model.planted import DEGRADATIONS
from blindtest.model.prompts import Prompt, prompt_sha256
from blindtest.model.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from blindtest.model.rng import RNG_VERSION, DesignRng
from blindtest.model.sides import (
    check_template,
    effective_temperature,
    identity_terms,
)
from blindtest.reportfmt import count
from blindtest.rundir.artifacts import schema_tag
from blindtest.rundir.types import (
    ArrangementEntry,
    DesignJudging,
    DesignRecord,
    PeopleSampleRecord,
    ProtocolName,
)
from blindtest.transport.addresses import (
    DEFAULT_BASE_URL as DEFAULT_BASE_URL,  # re-exported for old imports
)

SIDES = ("A", "B")
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    model: str
    base_url: str = DEFAULT_BASE_URL
    key_env: str = DEFAULT_KEY_ENV
    temperature: float = 1.0
    max_tokens: int | None = None
    top_p: float | None = None
    #: What the report calls the side (None: the model name).
    label: str | None = None
    #: The side's own system prompt (None: the design's shared one).
    system: str | None = None
    #: A user-message template with ``{prompt}`` (None: the prompt itself).
    template: str | None = None
    #: Request-body fields set last, in the order given (a None value removes the field).
    extra_params: tuple[tuple[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.top_p is not None:
            params["top_p"] = self.top_p
        record: dict[str, Any] = {
            "model": self.model,
            "base_url": parse_url("base_url", self.base_url).rstrip("/"),
            "key_env": self.key_env,
            "params": params,
        }
        # Optional fields only when given, so a design without them hashes as before.
        if self.label is not None and self.label != self.model:
            record["label"] = self.label
        if self.system is not None:
            record["system"] = self.system
        if self.template is not None:
            record["template"] = self.template
        if self.extra_params:
            record["extra_params"] = dict(self.extra_params)
        return record


@dataclass(frozen=True, slots=True)
class LaunderSpec:
    model: str
    base_url: str
    key_env: str
    prompt: str


@dataclass(frozen=True, slots=True)
class Normalization:
    strip_formatting: bool = False
    truncate_match: bool = False
    length_band: tuple[int, int] | None = None
    length_band_instruction: str | None = None
    launder: LaunderSpec | None = None
    #: Identity stripping (on by default) and the terms of --strip-identity-words.
    identity_strip: bool = True
    identity_words: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        band = None
        if self.length_band is not None:
            band = {
                "lo": self.length_band[0],
                "hi": self.length_band[1],
                "instruction": self.length_band_instruction or "",
            }
        launder = None
        if self.launder is not None:
            launder = {
                "model": self.launder.model,
                "base_url": parse_url(option("launder_url"), self.launder.base_url).rstrip("/"),
                "key_env": self.launder.key_env,
                "prompt": self.launder.prompt,
            }
        return {
            "version": NORMALIZERS_VERSION,
            "strip_formatting": self.strip_formatting,
            "truncate_match": self.truncate_match,
            "length_band": band,
            "launder": launder,
        }


@dataclass(frozen=True, slots=True)
class DesignOptions:
    a: ModelSpec
    b: ModelSpec
    seed: str
    protocol: str = DEFAULT_PROTOCOL
    trials: int = 20
    alpha: float = 0.05
    sequential: bool = False
    similarity_pd0: float | None = None
    #: Preference: the position gate's margin on the left share, fixed before any pick (None:
    #: not recorded, the analysis takes `blindtest.stats.position.POSITION_MARGIN`).
    position_margin: float | None = None
    demo: bool = False
    system: str | None = None
    normalization: Normalization = field(default_factory=Normalization)
    question: str | None = None
    #: --ask: asked once per comparison; --ask-each: asked of each option.
    extra_questions: tuple[str, ...] = ()
    extra_questions_per_option: tuple[str, ...] = ()
    require_reason: bool | None = None
    #: ``outputs.DirsSource.record()`` for --from-dirs designs; None for endpoints.
    source: dict[str, Any] | None = None
    #: Hidden control trials added to ``trials`` (preference only).
    controls: int = 0
    #: Several candidates (k = 2..20), in the order given, each with its side configuration
    #: (for --from-dirs: the model is the directory's name). When given, ``a`` and ``b`` are
    #: not read: the models are these, and ``trials`` counts the comparisons.
    candidates: tuple[tuple[str, ModelSpec], ...] = ()
    #: Who meets whom with candidates (``blindtest.model.pairing``): all, reference:NAME, sample:M.
    pairs: str = "all"
    #: People judge this many prompts (:mod:`blindtest.model.people_sample`); None: all.
    people_sample: int | None = None
    people_sample_by: str = "uniform"
    judge_prediction: str = "verdict"
    people_missing: str = "void"
    #: A pre-registered decision (``blindtest.designing.decision``), its planted comparisons
    #: added to ``trials`` as hidden controls are.
    decision: DecisionSpec | None = None

    @property
    def planted(self) -> int:
        """The planted comparisons of the sensitivity check (0 without)."""
        return self.decision.sensitivity if self.decision is not None else 0


def check_options(options: DesignOptions, distinct_prompts: int) -> None:
    """Refuse designs that cannot give a valid answer, with the fix in the message."""
    if options.protocol not in PROTOCOLS:
        raise BadInput(f"unknown protocol {options.protocol!r}; use one of {', '.join(PROTOCOLS)}")
    if options.trials < 1:
        raise BadInput(f"{option('trials')} must be at least 1, got {options.trials}")
    if not (0 < options.alpha <= 0.5) or math.isnan(options.alpha):
        raise BadInput(f"{option('alpha')} must be in (0, 0.5], got {options.alpha}")
    if not options.seed:
        raise BadInput(f"{option('seed')} must not be empty")
    if options.candidates:
        _check_candidates(options)
    elif options.source is None:
        _check_endpoints(options)
    if options.sequential and not PROTOCOLS[options.protocol].sequential:
        raise BadInput(f"{option('sequential')} is defined for the triangle protocol only")
    if options.similarity_pd0 is not None:
        _check_similarity(options, options.similarity_pd0)
    _check_position_margin(options)
    _check_questions(options)
    _check_controls(options, distinct_prompts)
    _check_people(options)
    _check_decision(options, distinct_prompts)
    if not options.candidates and distinct_prompts < options.trials:
        raise BadInput(
            f"found {count(distinct_prompts, 'distinct prompt')}, need {options.trials} "
            "(each prompt is used in one trial only); add prompts or use "
            f"{option('trials', distinct_prompts)}"
        )


def _check_people(options: DesignOptions) -> None:
    """A people's sample: a preference design (people and an LLM judge say which answer is
    better) without hidden controls. Its size is checked when it is drawn."""
    if options.people_sample is None:
        return
    if not PROTOCOLS[options.protocol].prefers:
        raise BadInput(
            f"{option('people_sample')} estimates what people prefer: use "
            f"{option('protocol', 'preference')}, or drop {option('people_sample')}"
        )
    if options.controls:
        raise BadInput(
            f"{option('people_sample')} and {option('controls')} are not combined (a hidden "
            f"control is judged by one kind of judge); drop one of them"
        )


def _check_candidates(options: DesignOptions) -> None:
    """Several candidates: 2..20 distinct names a file may carry, a preference design (a
    ranking needs a preference) without hidden controls, every endpoint sound."""
    names = [name for name, _ in options.candidates]
    if not pairing.MIN_CANDIDATES <= len(names) <= pairing.MAX_CANDIDATES:
        raise BadInput(
            f"{count(len(names), 'candidate')}: a design takes {pairing.MIN_CANDIDATES} to "
            f"{pairing.MAX_CANDIDATES}"
        )
    seen: set[str] = set()
    for name in names:
        try:
            check_candidate_name(name)
        except ValueError as error:
            raise BadInput(message_of(error)) from None
        if name in seen:
            raise BadInput(f"candidate {name!r} is named twice; names must be distinct")
        seen.add(name)
    if not PROTOCOLS[options.protocol].prefers:
        raise BadInput(
            "several candidates are ranked from preferences: "
            f"{option('protocol', options.protocol)} is refused with candidates; drop "
            f"{option('protocol')} or use {option('protocol', 'preference')}"
        )
    if options.controls:
        raise BadInput(
            f"{option('controls')} is refused with candidates (a hidden control measures a "
            f"judge of two sides); drop {option('controls')}"
        )
    try:
        pairing.parse_mode(options.pairs)
    except ValueError as error:
        raise BadInput(message_of(error)) from None
    if options.source is not None:
        return
    for name, spec in options.candidates:
        _check_model(name, spec, fields=f"candidate {name}:")


def _check_questions(options: DesignOptions) -> None:
    """--ask and --ask-each: preference only; each question once (answers are keyed by it)."""
    for flag, asked in (
        (option("extra_questions"), options.extra_questions),
        (option("extra_questions_per_option"), options.extra_questions_per_option),
    ):
        if asked and not PROTOCOLS[options.protocol].prefers:
            raise BadInput(
                f"{flag} is for the preference protocol only (a {options.protocol} judge answers "
                f"no extra questions); drop {flag} or use {option('protocol', 'preference')}"
            )
        if asked and len(options.candidates) > 2:
            raise BadInput(
                f"{flag} takes two candidates: its answers are tested between two (an exact "
                f"McNemar test for {option('extra_questions_per_option')}, Fisher's for "
                f"{option('extra_questions')}), and this design has "
                f"{len(options.candidates)}; drop {flag}"
            )
        for question in asked:
            if not question.strip():
                raise BadInput(f"{flag} needs the words of a question, got {question!r}")
    seen: set[str] = set()
    for question in (*options.extra_questions, *options.extra_questions_per_option):
        if question in seen:
            twice = (
                f"in {option('extra_questions')} and {option('extra_questions_per_option')}"
                if question in options.extra_questions
                and question in options.extra_questions_per_option
                else "twice"
            )
            raise BadInput(
                f"the question {question!r} is given {twice}; answers are keyed by the "
                f"question, so ask it once, either of the comparison ({option('extra_questions')}) "
                f"or of each option ({option('extra_questions_per_option')})"
            )
        seen.add(question)


def _check_controls(options: DesignOptions, distinct_prompts: int) -> None:
    """--controls K: preference only, 0 <= K <= --trials, two independent draws possible,
    a prompt of its own for every control."""
    k = options.controls
    if k < 0:
        raise BadInput(f"{option('controls')} must be 0 or more, got {k}")
    if k == 0:
        return
    if not PROTOCOLS[options.protocol].prefers:
        raise BadInput(
            f"{option('controls')} is for preference designs only (a {options.protocol} trial "
            f"already compares the two models); drop {option('controls')} or use "
            f"{option('protocol', 'preference')}"
        )
    if k > options.trials:
        raise BadInput(
            f"{option('controls', k)} is more than the {options.trials} real trials; controls "
            "measure the judge, the trials measure the models: use "
            f"{option('controls', options.trials)} or fewer"
        )
    if options.source is not None:
        raise BadInput(
            f"{option('controls')} needs two independent draws of one model per control; "
            f"{option('from_dirs')} supplies one output per item and side: drop "
            f"{option('controls')}"
        )
    for side, spec in zip(SIDES, (options.a, options.b), strict=True):
        if effective_temperature(spec.to_dict()) == 0:
            raise BadInput(
                f"{option('controls')} is refused at temperature 0 (side {side}): a control's "
                "two draws of one model would be identical and the control seen at a glance; "
                f"use a temperature above 0 or drop {option('controls')}"
            )
    total = options.trials + k
    if distinct_prompts < total:
        raise BadInput(
            f"found {count(distinct_prompts, 'distinct prompt')}, need {options.trials} + "
            f"{k} controls = {total} (each prompt is used in one trial only, controls "
            f"included); add prompts or lower {option('trials')} or {option('controls')}"
        )


def _check_decision(options: DesignOptions, distinct_prompts: int) -> None:
    """--decide: a champion the design has, no second similarity claim, and a prompt of its
    own for every planted comparison (with candidates: prompts left for the schedule)."""
    decision = options.decision
    if decision is None:
        return
    if decision.rule != "similar" and options.alpha >= 0.5:
        raise BadInput(
            f"{option('decide')} {decision.rule} reads a 1 - 2 alpha interval: {option('alpha')} "
            "must be below 0.5, "
            f"got {options.alpha}"
        )
    sides = [name for name, _ in options.candidates] or list(SIDES)
    if decision.champion not in sides:
        raise BadInput(
            f"{option('champion')} {decision.champion}: no side of that name; give one of "
            f"{', '.join(sides)}"
        )
    if decision.rule == "similar" and options.similarity_pd0 is not None:
        raise BadInput(
            f"{option('decide')} similar:PD0 is the similarity claim; give it once: drop "
            f"{option('similarity_pd0')}"
        )
    planted = decision.sensitivity
    if not planted:
        return
    if options.source is not None:
        raise BadInput(
            f"{option('sensitivity')} needs the champion to answer the planted prompts; "
            f"{option('from_dirs')} "
            f"supplies one output per item and side: drop {option('sensitivity')}"
        )
    if options.candidates:
        if distinct_prompts - planted < 1:
            raise BadInput(
                f"{option('sensitivity')} {planted}: each planted comparison takes a prompt of "
                "its own, "
                f"and the {count(distinct_prompts, 'prompt')} leave none for the candidates; "
                f"add prompts or lower {option('sensitivity')}"
            )
        return
    total = options.trials + options.controls + planted
    controls = f" + {options.controls} controls" if options.controls else ""
    if distinct_prompts < total:
        raise BadInput(
            f"found {count(distinct_prompts, 'distinct prompt')}, need {options.trials} + "
            f"{planted} planted comparisons{controls} = {total} (each prompt is used in one "
            f"trial only); add prompts or lower {option('trials')} or {option('sensitivity')}"
        )


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HOST_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$")
#: Words that make a query parameter a secret (Azure's api-key, Google's key, signed URLs).
_SECRET_WORDS = frozenset(
    {
        "key", "apikey", "token", "secret", "password", "passwd", "pwd", "sig", "signature",
        "auth", "authorization", "credential", "credentials",
    }
)  # fmt: skip
_NAME_PARTS = re.compile(r"[-_.\s]+")
_URL_EXAMPLE = "e.g. http://localhost:11434/v1"


def parse_url(where: str, url: str, key_env_option: str | None = None) -> str:
    """The URL as the design records it (scheme and host lower-cased), or BadInput naming the
    option. Everything the client later needs is checked here, so a design that was hashed
    never carries a URL the client cannot open: scheme, host, port range, IPv6 brackets.
    A URL holding credentials is refused without echoing it (it may hold a password)."""
    if not url or any(c.isspace() or ord(c) < 32 for c in url):
        raise BadInput(f"{where}: {url!r} is not an http(s) URL (no spaces), {_URL_EXAMPLE}")
    try:
        parts = urlsplit(url)
    except ValueError:
        if "[" in url:
            raise BadInput(
                f"{where}: {url!r} has an unclosed or invalid IPv6 address; write it in "
                "brackets, e.g. http://[::1]:8000/v1"
            ) from None
        raise BadInput(f"{where}: {url!r} is not a URL, {_URL_EXAMPLE}") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadInput(f"{where}: {url!r} is not an http(s) URL, {_URL_EXAMPLE}")
    if "@" in parts.netloc:
        key_option = key_env_option or (
            where.removesuffix("base_url") + "key_env"
            if where.endswith(" base_url")
            else option("a_key_env")
        )
        bare = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        raise BadInput(
            f"{where}: a URL with a user name or password ('user:...@') is refused, so it "
            f"never reaches design.json; give {bare} and name the key's environment variable "
            f"with {key_option}"
        )
    secret = next(
        (
            name
            for name, _ in parse_qsl(parts.query, keep_blank_values=True)
            if _SECRET_WORDS.intersection(_NAME_PARTS.split(name.lower()))
        ),
        None,
    )
    if secret is not None:
        raise BadInput(
            f"{where}: the URL's query holds {secret!r}, which looks like a credential; "
            "design.json must not hold keys: drop it and name the key's environment variable"
        )
    _check_host(where, url, parts.hostname or "")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise BadInput(f"{where}: {url!r} has a bad port; a port is a number in 1..65535")
    if parts.fragment:
        raise BadInput(f"{where}: {url!r} has a #fragment, which no server reads; drop it")
    return urlunsplit(parts._replace(netloc=parts.netloc.lower()))


def _check_host(where: str, url: str, host: str) -> None:
    if not host:
        ipv6 = "an IPv6 address goes in brackets, e.g. http://[::1]:8000/v1"
        hint = ipv6 if ":" in url.partition("://")[2].split("/")[0] else _URL_EXAMPLE
        raise BadInput(f"{where}: {url!r} names no host; {hint}")
    if ":" in host:  # an IPv6 literal; urlsplit checked it is one
        return
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise BadInput(f"{where}: {url!r} has an invalid host name {host!r}") from None
    labels = ascii_host.rstrip(".").split(".")
    if not all(_HOST_LABEL.match(label) for label in labels):
        raise BadInput(f"{where}: {url!r} has an invalid host name {host!r}")


def check_url(where: str, url: str, key_env_option: str | None = None) -> None:
    parse_url(where, url, key_env_option)


def check_key_env(where: str, name: str) -> None:
    """A key variable's NAME (never the key itself), or BadInput naming the option."""
    if not _ENV_NAME.match(name):
        raise BadInput(
            f"{where}: {name!r} is not an environment variable name; give the NAME of the "
            "variable that holds the key, never the key itself"
        )


def _check_model(side: str, spec: ModelSpec, fields: str | None = None) -> None:
    """One side's configuration; ``fields`` names a candidate's fields ("candidate NAME"),
    else they are the two-sided options (``a_url``...)."""
    lower = side.lower()

    def name(field: str) -> str:
        if fields is not None:  # a sides table's keys
            return f"{fields} {'base_url' if field == 'url' else field}"
        return option(f"model_{lower}" if field == "model" else f"{lower}_{field}")

    if not spec.model.strip():
        raise BadInput(f"{name('model')}: the model name is empty")
    check_url(name("url"), spec.base_url, name("key_env"))
    check_key_env(name("key_env"), spec.key_env)
    if not 0 <= spec.temperature <= 2:
        where = (
            f"{fields.rstrip(':')}; a {option('sides')} table's temperature sets one candidate only"
            if fields is not None
            else f"side {side}; {option(f'{lower}_temperature')} sets this side only"
        )
        raise BadInput(
            f"{option('temperature')} must be in [0, 2], got {spec.temperature} ({where})"
        )
    if spec.template is not None:
        check_template(name("template"), spec.template)
    if spec.label is not None and not spec.label.strip():
        raise BadInput(f"{name('label')} is empty; give a name such as 'prompt v2'")
    if spec.top_p is not None and not 0 < spec.top_p <= 1:
        raise BadInput(f"{name('top_p')} must be in (0, 1], got {spec.top_p}")


def _check_endpoints(options: DesignOptions) -> None:
    for side, spec in zip(SIDES, (options.a, options.b), strict=True):
        _check_model(side, spec)
    if PROTOCOLS[options.protocol].repeats_side:
        _check_triangle_temperature(options)


def _check_triangle_temperature(options: DesignOptions) -> None:
    for side, spec in zip(SIDES, (options.a, options.b), strict=True):
        if effective_temperature(spec.to_dict()) == 0:
            raise BadInput(
                f"the triangle test is refused at temperature 0 (side {side}): the two "
                "same-model responses would be identical and the odd one found without "
                f"reading; use {option('protocol', 'pair')} for deterministic endpoints"
            )


def _check_position_margin(options: DesignOptions) -> None:
    """--position-margin M (when given): preference only, 0 < M < 1/2."""
    margin = options.position_margin
    if margin is None:
        return
    if not 0 < margin < 0.5:  # NaN fails too
        raise BadInput(f"{option('position_margin')} must be in (0, 0.5), got {margin:g}")
    if not PROTOCOLS[options.protocol].prefers:
        raise BadInput(
            f"{option('position_margin')} is for preference designs: a {options.protocol} "
            f"trial has no left and right to lean to; drop {option('position_margin')}"
        )


def _check_similarity(options: DesignOptions, pd0: float) -> None:
    if not 0 < pd0 < 1:
        raise BadInput(f"{option('similarity_pd0')} must be in (0, 1), got {pd0}")
    if not PROTOCOLS[options.protocol].similarity:
        raise BadInput(f"{option('similarity_pd0')} applies to the triangle and pair protocols")
    if options.sequential:
        raise BadInput(
            f"{option('similarity_pd0')} and {option('sequential')} cannot be combined: the "
            "e-process tests for a difference, not for similarity"
        )


def balanced_sides(n: int, rng: DesignRng) -> list[str]:
    """``n`` sides with equal A and B counts (the odd one out drawn), in seeded random order."""
    sides = ["A", "B"] * (n // 2)
    if n % 2:
        sides.append(SIDES[rng.randbelow(2)])
    rng.shuffle(sides)
    return sides


def build_arrangement(
    seed: str,
    trials: int,
    prompt_ids: Sequence[str],
    protocol: str,
    controls: int = 0,
    planted: int = 0,
    champion: str = "A",
) -> list[ArrangementEntry]:
    """The trial arrangement; see the module docstring for the exact derivation. ``trials``
    counts every comparison shown, ``controls`` of them hidden controls and ``planted`` of
    them the sensitivity check's planted comparisons of ``champion``'s answer."""
    order = list(range(len(prompt_ids)))
    DesignRng(seed, "prompts").shuffle(order)
    arrangement: list[ArrangementEntry] = [
        {"trial": t, "prompt_id": prompt_ids[order[t - 1]]} for t in range(1, trials + 1)
    ]
    controls = min(controls, trials)  # a design cannot hold more (bt-verify may be handed one)
    planted = min(planted, trials - controls)
    if planted:
        return _with_planted(seed, arrangement, controls, planted, champion)
    if controls:
        numbers = list(range(1, trials + 1))
        DesignRng(seed, "controls").shuffle(numbers)
        chosen = sorted(numbers[:controls])
        control_sides = balanced_sides(controls, DesignRng(seed, "control_sides"))
        for number, side in zip(chosen, control_sides, strict=True):
            arrangement[number - 1]["control"] = side
        real = [e for e in arrangement if "control" not in e]
        left = balanced_sides(len(real), DesignRng(seed, "left"))
        for entry, side in zip(real, left, strict=True):
            entry["left"] = side
        for entry in arrangement:
            if "control" in entry:
                entry["left"] = entry["control"]
        return arrangement
    if PROTOCOLS[protocol].layout_key == "doubled":  # one side shown twice, one odd position
        doubled = balanced_sides(trials, DesignRng(seed, "doubled"))
        odd_rng = DesignRng(seed, "odd_position")
        for entry, side in zip(arrangement, doubled, strict=True):
            entry["doubled"] = side
            entry["odd_position"] = odd_rng.randbelow(3) + 1
    else:
        left = balanced_sides(trials, DesignRng(seed, "left"))
        for entry, side in zip(arrangement, left, strict=True):
            entry["left"] = side
    return arrangement


def _plant(seed: str, numbers: Sequence[int], champion: str) -> dict[int, dict[str, Any]]:
    """Planted trial -> its record: the degradation (``"degradation"`` stream, one
    ``randbelow(3)`` per planted trial in trial order) and the original's position (a balanced
    list, as the sides of step 2, from the ``"planted_position"`` stream: A = 1, B = 2)."""
    chosen = sorted(numbers)
    how = DesignRng(seed, "degradation")
    positions = balanced_sides(len(chosen), DesignRng(seed, "planted_position"))
    return {
        number: {
            "side": champion,
            "original": 1 if position == "A" else 2,
            "degradation": DEGRADATIONS[how.randbelow(len(DEGRADATIONS))],
        }
        for number, position in zip(chosen, positions, strict=True)
    }


def _with_planted(
    seed: str,
    arrangement: list[ArrangementEntry],
    controls: int,
    planted: int,
    champion: str,
) -> list[ArrangementEntry]:
    """A two-sided preference arrangement with planted comparisons (step 6 of the module
    docstring): the controls as in step 5, then the ``"planted"`` stream shuffles the other
    trial numbers and the first ``planted`` of them become planted comparisons; the
    ``"left"`` sides go, in order, to the real trials."""
    numbers = list(range(1, len(arrangement) + 1))
    chosen_controls: list[int] = []
    if controls:
        DesignRng(seed, "controls").shuffle(numbers)
        chosen_controls = sorted(numbers[:controls])
        sides = balanced_sides(controls, DesignRng(seed, "control_sides"))
        for number, side in zip(chosen_controls, sides, strict=True):
            arrangement[number - 1]["control"] = side
            arrangement[number - 1]["left"] = side
    rest = [n for n in range(1, len(arrangement) + 1) if n not in set(chosen_controls)]
    DesignRng(seed, "planted").shuffle(rest)
    for number, record in _plant(seed, rest[:planted], champion).items():
        arrangement[number - 1]["left"] = champion
        arrangement[number - 1]["planted"] = record
    real = [e for e in arrangement if "control" not in e and "planted" not in e]
    for entry, side in zip(real, balanced_sides(len(real), DesignRng(seed, "left")), strict=True):
        entry["left"] = side
    return arrangement


def build_candidate_arrangement(
    seed: str,
    candidates: Sequence[str],
    prompt_ids: Sequence[str],
    pairs: str,
    trials: int | None = None,
    planted: int = 0,
    champion: str | None = None,
) -> list[ArrangementEntry]:
    """A several-candidate design's arrangement: :func:`blindtest.model.pairing.schedule` over the
    prompts in the design's order, capped at ``trials`` comparisons, numbered 1..N in the
    order the schedule gives. ValueError (one line) for what the schedule refuses.

    With ``planted`` comparisons (the sensitivity check of ``champion``): the ``"planted"``
    stream shuffles the prompts' positions and the first ``planted`` of them become planted
    prompts, in design order; the schedule runs over the others; the ``"planted_trials"``
    stream shuffles the numbers 1..N + planted and the first ``planted`` (in order) carry the
    planted comparisons, the rest the schedule's, in its order."""
    if not planted:
        comparisons = pairing.schedule(candidates, len(prompt_ids), pairs, seed, trials=trials)
        return [
            {"trial": n, "prompt_id": prompt_ids[c.prompt], "left": c.left, "right": c.right}
            for n, c in enumerate(comparisons, start=1)
        ]
    if champion is None or champion not in candidates:
        raise ValueError(f"the champion {champion!r} is not a candidate")
    positions = list(range(len(prompt_ids)))
    DesignRng(seed, "planted").shuffle(positions)
    chosen = set(positions[:planted])
    planted_ids = [p for i, p in enumerate(prompt_ids) if i in chosen]
    real_ids = [p for i, p in enumerate(prompt_ids) if i not in chosen]
    comparisons = pairing.schedule(candidates, len(real_ids), pairs, seed, trials=trials)
    real: list[ArrangementEntry] = [
        {"trial": 0, "prompt_id": real_ids[c.prompt], "left": c.left, "right": c.right}
        for c in comparisons
    ]
    total = len(real) + len(planted_ids)
    numbers = list(range(1, total + 1))
    DesignRng(seed, "planted_trials").shuffle(numbers)
    marks = _plant(seed, numbers[: len(planted_ids)], champion)
    arrangement: list[ArrangementEntry] = []
    taken_real, taken_planted = iter(real), iter(planted_ids)
    for number in range(1, total + 1):
        if number in marks:
            entry: ArrangementEntry = {
                "trial": number,
                "prompt_id": next(taken_planted),
                "left": champion,
                "right": champion,
                "planted": marks[number],
            }
        else:
            entry = next(taken_real)
            entry["trial"] = number
        arrangement.append(entry)
    return arrangement


def _models(options: DesignOptions) -> dict[str, Any]:
    if options.candidates:
        if options.source is None:
            return {name: spec.to_dict() for name, spec in options.candidates}
        dirs = options.source["dirs"]
        return {name: {"model": spec.model, "dir": dirs[name]} for name, spec in options.candidates}
    if options.source is None:
        return {"A": options.a.to_dict(), "B": options.b.to_dict()}
    dirs = options.source["dirs"]
    return {
        side: {"model": spec.model, "dir": dirs[side]}
        for side, spec in (("A", options.a), ("B", options.b))
    }


def prompt_record(prompt: Prompt) -> dict[str, Any]:
    record: dict[str, Any] = {"id": prompt.id, "text": prompt.text}
    if prompt.history:  # a conversation: ``text`` is its last (user) turn
        record["messages"] = prompt.messages()
    record["sha256"] = prompt_sha256(record)
    if prompt.tags:
        record["tags"] = list(prompt.tags)
    if prompt.reference is not None:
        record["reference"] = prompt.reference
    if prompt.check is not None:
        record["check"] = dict(prompt.check)
    for name in ("criteria", "source", "constraints"):  # for an LLM judge
        if getattr(prompt, name) is not None:
            record[name] = getattr(prompt, name)
    return record


def build_design(
    prompts: Sequence[Prompt], options: DesignOptions, provenance: dict[str, Any]
) -> DesignRecord:
    """The design document (not yet serialized). Same arguments give an equal document."""
    check_options(options, len(prompts))
    models = _models(options)
    judging: DesignJudging = {
        "question": options.question or PROTOCOLS[options.protocol].question,
        "extra_questions": list(options.extra_questions),
        "require_reason": (
            options.require_reason
            if options.require_reason is not None
            else PROTOCOLS[options.protocol].prefers
        ),
    }
    if options.extra_questions_per_option:  # absent otherwise: earlier designs keep their bytes
        judging["extra_questions_per_option"] = list(options.extra_questions_per_option)
    total = options.trials + options.controls + options.planted
    prompt_ids = [p.id for p in prompts]
    names = [name for name, _ in options.candidates]
    champion = options.decision.champion if options.decision is not None else "A"
    if names:
        try:
            arrangement = build_candidate_arrangement(
                options.seed,
                names,
                prompt_ids,
                options.pairs,
                options.trials,
                options.planted,
                champion,
            )
        except ValueError as error:
            raise BadInput(message_of(error)) from None
        total = len(arrangement)
    else:
        arrangement = build_arrangement(
            options.seed,
            total,
            prompt_ids,
            options.protocol,
            options.controls,
            options.planted,
            champion,
        )
    record: DesignRecord = {
        "schema": schema_tag("design"),
        "protocol": cast(ProtocolName, options.protocol),  # check_options refused any other
        "trials": total,
        "seed": options.seed,
        "rng": RNG_VERSION,
        "alpha": options.alpha,
        "sequential": options.sequential,
        "similarity_pd0": options.similarity_pd0,
        "demo": options.demo,
        "source": options.source or {"kind": "endpoints"},
        "models": models,
        "system": options.system,
        "normalization": {
            **options.normalization.to_dict(),
            "identity_strip": identity_config(
                options.normalization.identity_strip,
                options.normalization.identity_words,
                identity_terms({"models": models}),
            ),
        },
        "judging": judging,
        "prompts": [prompt_record(p) for p in prompts],
        "arrangement": arrangement,
        "provenance": provenance,
    }
    if options.controls:  # absent when 0, so a design without controls hashes as before
        record["controls"] = options.controls
    if options.position_margin is not None:  # absent unless given: earlier designs keep their hash
        record["position_margin"] = float(options.position_margin)
    if names:  # absent for two sides, so a two-sided design hashes as before
        record["candidates"] = names
        mode = str(pairing.parse_mode(options.pairs))  # as the schedule reads it: sample:3
        record["pairing"] = {"version": pairing.PAIRING_VERSION, "mode": mode}
    if options.people_sample is not None:  # absent without one: earlier designs keep their hash
        record["people_sample"] = _people_sample(options, record)
    if options.decision is not None:  # absent without --decide: earlier designs keep their bytes
        record["decision"] = options.decision.to_dict(options.alpha)
    return record


def _people_sample(options: DesignOptions, record: DesignRecord) -> PeopleSampleRecord:
    from blindtest.model.people_sample import draw_people_sample, used_prompts

    assert options.people_sample is not None
    try:
        drawn = draw_people_sample(
            options.seed,
            used_prompts(record),
            options.people_sample,
            options.people_sample_by,
            judge_prediction=options.judge_prediction,
            missing=options.people_missing,
        )
    except ValueError as error:
        raise BadInput(message_of(error)) from None
    return cast(PeopleSampleRecord, drawn)
