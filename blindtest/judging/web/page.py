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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jinja2
import markupsafe

from blindtest.judging.answers import CHOOSE_SIDE, GIVE_REASON, unanswered
from blindtest.judging.terminal.questions import help_text, nickname_keys, pick_words
from blindtest.model.picks import OPTION_ANSWER_KEYS, JudgeView, Pick, Trial
from blindtest.model.protocols import BOTH_BAD, PROTOCOLS
from blindtest.present.markup import neutralise, render_text

#: The static assets the page links, by name, with their content types.
STATIC = {
    "page.css": "text/css; charset=utf-8",
    "keys.js": "text/javascript; charset=utf-8",
    "icon.svg": "image/svg+xml",
}


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
    """Where a reviewer stands: ``number`` of this sitting's trials shown, out of ``total``;
    ``judged`` of them judged so far and ``left`` still to judge (this one included)."""

    number: int
    total: int
    judged: int = 0
    left: int = 0

    @property
    def counts(self) -> str:
        """The progress in words: how many are judged and how many are left."""
        return f"{self.judged} judged · {self.left} left"


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


def pick_label(view: JudgeView, pick: int | str) -> str:
    """A pick in the page's words: option 2, left, tie, both bad, option 1 is fox."""
    if isinstance(pick, int):
        return f"option {pick}"
    if pick == BOTH_BAD:
        return "both bad"
    return pick_words(view.protocol, pick, True)


def _again(view: JudgeView, correcting: Pick | None) -> str:
    """The line over a trial shown again because its pick was taken back."""
    if correcting is None:
        return ""
    earlier = pick_label(view, correcting.pick)
    return (
        f"You took back your pick for trial {correcting.trial} ({earlier}): pick again; your "
        "reason and answers are filled in as you gave them. If you leave now, the earlier "
        "pick stands."
    )


def _changing(view: JudgeView, word: Pick | None) -> str:
    """The line over a trial opened from the history to be changed."""
    if word is None:
        return ""
    return (
        f"Changing your pick for trial {word.trial} (now: {pick_label(view, word.pick)}). "
        "Submit saves the new answer as a change; Cancel keeps it as it is."
    )


def form_of(view: JudgeView, pick: Pick | None) -> dict[str, str]:
    """A pick as the form's fields, to fill the form in again (an undo, a change): the
    choice, the reason and each extra answer (``q{i}``, ``e{i}-left`` / ``e{i}-right``)."""
    if pick is None:
        return {}
    fields = {"pick": str(pick.pick), "reason": pick.reason or ""}
    answers = pick.answers or {}
    for i, question in enumerate(view.extra_questions_per_option, start=1):
        answer = answers.get(question)
        if isinstance(answer, Mapping):
            for side in OPTION_ANSWER_KEYS:
                fields[f"e{i}-{side}"] = "yes" if answer.get(side) else "no"
    for i, question in enumerate(view.extra_questions, start=1):
        answer = answers.get(question)
        if isinstance(answer, bool):
            fields[f"q{i}"] = "yes" if answer else "no"
    return fields


def _missing(view: JudgeView) -> dict[str, str]:
    """The words the page shows next to each part of the answer left out (the shared rule's,
    so the page says what the server would)."""
    words = {"pick": CHOOSE_SIDE, "reason": GIVE_REASON}
    for i, question in enumerate(view.extra_questions_per_option, start=1):
        words[f"e{i}"] = unanswered(question, each=True)
    for i, question in enumerate(view.extra_questions, start=1):
        words[f"q{i}"] = unanswered(question, each=False)
    return words


#: The page's keys, for its help (the terminal's are in its own help).
PAGE_KEYS = (
    "Keys: Enter submits; H shows your picks so far (any of them can be changed there); "
    "S skips this comparison for now (it comes back after the others); U takes back your last "
    "pick; ? opens or closes this help. On a touch screen, use the buttons."
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
    error_field: str | None = None,
    change: Pick | None = None,
    history: int = 0,
    skipped: bool = False,
) -> str:
    """One trial: a conversation's earlier turns (each under its role, as the terminal shows
    them), the prompt, the options side by side, the question and its answers. ``undo``: the
    trial whose pick the Undo button takes back (None: no button); ``correcting``: the pick
    being taken back when this trial is shown again (its reason and answers filled in);
    ``mark``: the turn's mark, which the forms send back (``Screen.mark``); ``error_field``:
    what ``error`` is about, said next to it; ``change``: the pick being changed, when the
    trial is opened from the history (filled in; Cancel keeps it); ``history``: how many
    picks the history holds (0: no link); ``skipped``: the trial was skipped earlier."""
    keys = nickname_keys(nicknames) if nicknames else (None, None)
    rules = PROTOCOLS[view.protocol]
    earlier = change or correcting
    placed = {"reason", *view.extra_questions, *view.extra_questions_per_option}
    placed |= {"pick"} if rules.pick_kind == "side" else set()
    placed |= {"nicknames"} if rules.pick_kind == "nickname" and not nicknames else set()
    return _render(
        "trial.html",
        title=(
            f"changing trial {trial.number}"
            if change is not None
            else f"trial {place.number} of {place.total}"
        ),
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
        undo=undo if change is None else None,
        mark=mark,
        again=_changing(view, change) or _again(view, correcting),
        change=change.trial if change is not None else None,
        nicknames=nicknames,
        nickname_keys=keys,
        error=error,
        error_field=error_field if error_field in placed else None,
        form=form if form is not None else form_of(view, earlier),
        help=[*help_text(view.protocol, view.sequential)[:2], PAGE_KEYS],
        help_open=place.number == 1 and change is None,
        both_bad=rules.prefers and rules.pick_kind == "side",
        history_count=history,
        skipped=skipped,
        keep_label="Keep the earlier pick" if correcting is not None else "Skip for now",
        missing=_missing(view),
    )


def history_page(view: JudgeView, words: Sequence[Pick], place: Place, base: str) -> str:
    """A reviewer's picks so far, each with a link to change it: the trial, the prompt's
    opening words, the pick, the reason and the answers. Nothing about sides: only what the
    reviewer answered."""
    rows = []
    for word in words:
        prompt = " ".join(view.trials[word.trial - 1].prompt.split())
        answers = []
        for question, answer in (word.answers or {}).items():
            asked = question if question.endswith(("?", ":")) else f"{question}:"
            if isinstance(answer, bool):
                answers.append(f"{asked} {'yes' if answer else 'no'}")
            else:
                said = ", ".join(
                    f"{side} {'yes' if answer.get(side) else 'no'}" for side in OPTION_ANSWER_KEYS
                )
                answers.append(f"{asked} {said}")
        rows.append(
            {
                "trial": word.trial,
                "prompt": neutralise(prompt[:80] + ("..." if len(prompt) > 80 else "")),
                "pick": pick_label(view, word.pick),
                "narrow": {"left": "top", "right": "bottom"}.get(str(word.pick), ""),
                "reason": word.reason or "",
                "answers": answers,
            }
        )
    return _render(
        "history.html",
        title="your picks so far",
        base=base,
        rows=rows,
        place=place,
        prefers=PROTOCOLS[view.protocol].prefers,
        asks=view.asks_extra,
    )


def message_page(
    title: str, base: str, paragraphs: list[str], *, button: str = "", history: int = 0
) -> str:
    """A page of words only: the break screen, the end of a sitting, a stopped server.
    ``history``: how many picks the reviewer's history holds (0: no link to it)."""
    return _render(
        "message.html",
        title=title,
        base=base,
        paragraphs=paragraphs,
        button=button,
        history_count=history,
    )


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
