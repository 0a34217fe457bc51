"""What a reviewer sees on the judging page, rendered from templates. Pure: no socket, no file
written; the templates and static assets are package data read through ``importlib.resources``.

It must never render anything that depends on the arrangement: it gets a ``JudgeView`` (the
blinded trials and the question), the trial shown and where the reviewer stands. Response text
is untrusted: markdown is rendered with raw HTML off (it is escaped, never executed), links
whose scheme markdown-it refuses (``javascript:``, ``vbscript:``, ``file:``, ``data:``) stay
text, and every other string goes through Jinja2's autoescape.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jinja2
import markupsafe

from blindtest.judging.terminal.questions import help_text, nickname_keys, pick_words
from blindtest.model.picks import JudgeView, Pick, Trial
from blindtest.model.protocols import PROTOCOLS
from blindtest.present.markup import render_text

#: The static assets the page links, by name, with their content types.
STATIC = {"page.css": "text/css; charset=utf-8", "keys.js": "text/javascript; charset=utf-8"}


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("blindtest.judging.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def static_asset(name: str) -> bytes:
    """The bytes of one of the page's own assets (``STATIC``)."""
    if name not in STATIC:
        raise KeyError(name)
    return resources.files("blindtest.judging.web").joinpath("static").joinpath(name).read_bytes()


@dataclass(frozen=True, slots=True)
class Place:
    """Where a reviewer stands: ``number`` of this sitting's trials shown, out of ``total``."""

    number: int
    total: int


def _render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(**context)


#: A preference's two sides, by the layout they stand in: side by side on a wide screen,
#: one above the other on a narrow one (the page shows the words that match, by CSS).
SIDES = (
    {"value": "left", "key": "l", "wide": "Left", "narrow": "Top"},
    {"value": "right", "key": "r", "wide": "Right", "narrow": "Bottom"},
)


def _option_labels(protocol: str, count: int) -> list[str]:
    if PROTOCOLS[protocol].pick_kind == "side":  # the picks are the words left and right
        return ["Left (L)", "Right (R)"]
    return [f"Option {i}" for i in range(1, count + 1)]


def _again(view: JudgeView, correcting: Pick | None) -> str:
    """The line over a trial shown again because its pick was taken back."""
    if correcting is None:
        return ""
    pick = correcting.pick
    earlier = f"option {pick}" if isinstance(pick, int) else pick_words(view.protocol, pick, True)
    return (
        f"You took back your pick for trial {correcting.trial} ({earlier}): pick again. "
        "If you leave now, the earlier pick stands."
    )


def trial_page(
    view: JudgeView,
    trial: Trial,
    place: Place,
    base: str,
    *,
    plain: bool,
    nicknames: tuple[str, str] | None,
    error: str = "",
    form: Mapping[str, str] | None = None,
    undo: int | None = None,
    correcting: Pick | None = None,
    mark: str = "",
) -> str:
    """One trial: a conversation's earlier turns (each under its role, as the terminal shows
    them), the prompt, the options side by side, the question and its answers. ``undo``: the
    trial whose pick the Undo button takes back (None: no button); ``correcting``: the pick
    being taken back when this trial is shown again; ``mark``: the turn's mark, which both
    forms send back (``Screen.mark``)."""
    keys = nickname_keys(nicknames) if nicknames else (None, None)
    return _render(
        "trial.html",
        title=f"trial {place.number} of {place.total}",
        base=base,
        view=view,
        protocol=view.protocol,
        pick_kind=PROTOCOLS[view.protocol].pick_kind,
        protocol_title=PROTOCOLS[view.protocol].title,
        trial=trial,
        place=place,
        prompt=render_text(trial.prompt, plain=plain),
        history=[(role, render_text(text, plain=plain)) for role, text in trial.history],
        options=[render_text(text, plain=plain) for text in trial.options],
        labels=_option_labels(view.protocol, len(trial.options)),
        sides=SIDES,
        undo=undo,
        mark=mark,
        again=_again(view, correcting),
        nicknames=nicknames,
        nickname_keys=keys,
        error=error,
        form=form or {},
        help=help_text(view.protocol, view.sequential)[:2],
    )


def message_page(title: str, base: str, paragraphs: list[str], *, button: str = "") -> str:
    """A page of words only: the break screen, the end of a sitting, a stopped server."""
    return _render("message.html", title=title, base=base, paragraphs=paragraphs, button=button)


#: The wrong-link page's own few rules, inline (the page's stylesheet is served under a
#: reviewer's token only); the server allows exactly this text by its hash
#: (``WRONG_LINK_CSP``), nothing else inline.
WRONG_LINK_STYLE = (
    ":root{color-scheme:light dark}"
    "body{font:16px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
    "max-width:40rem;padding:3rem 1rem}"
    "h1{font-size:1.5rem}code{white-space:nowrap}"
)
WRONG_LINK_CSP = (
    "default-src 'none'; style-src 'sha256-"
    + base64.b64encode(hashlib.sha256(WRONG_LINK_STYLE.encode()).digest()).decode()
    + "'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def wrong_link_page() -> str:
    """What a link that opens nothing here shows (mistyped, cut short, from another run, or
    retired): what to do, and nothing about the run or its reviewers. Served without the
    page's assets (they are under a reviewer's token): its few style rules are inline."""
    return _render("wrong_link.html", style=markupsafe.Markup(WRONG_LINK_STYLE))
