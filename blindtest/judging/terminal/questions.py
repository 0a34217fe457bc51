"""What a judge types and reads in the terminal, per protocol: the answer keys, the pair
nicknames' keys, how a typed answer is read (the pick record it makes is built by the rule the
judging page shares, ``blindtest.judging.answers``), the help text and the closing words. Pure.

The answer forms follow the protocol's kind of pick (`Protocol.pick_kind`: a position, a
nickname or a side), so a protocol whose picks are of a known kind needs nothing here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from blindtest.judging.answers import COMMAND_KEYS
from blindtest.judging.terminal.layout import fit, sanitize, wrap_prose_line
from blindtest.model.picks import JudgeView, JudgingResult, Pick
from blindtest.reportfmt import count

if TYPE_CHECKING:
    from blindtest.judging.driver import Turn
from blindtest.model.protocols import BOTH_BAD, PREFERENCE_PICKS, PROTOCOLS


def nickname_keys(nicknames: tuple[str, str]) -> tuple[str | None, str | None]:
    """One letter per nickname that cannot be misread: the first letter of each, else its
    next letter when the two collide or the letter is a command key; None when a nickname
    has no free letter (it is then typed whole)."""
    keys: list[str | None] = []
    for name in nicknames:
        other = [n.lower() for n in nicknames if n != name]
        key = next(
            (
                ch
                for ch in name.lower()
                if ch.isalpha() and ch not in COMMAND_KEYS and ch not in keys and ch not in other
            ),
            None,
        )
        keys.append(key)
    return keys[0], keys[1]


def answer_keys(protocol: str, nicknames: tuple[str, str] | None, beside: bool = False) -> str:
    rules = PROTOCOLS[protocol]
    if rules.pick_kind == "side":
        bad = ", x = both bad" if rules.prefers else ""
        if beside:
            return f"l = left, r = right, t = tie{bad}"
        return f"1 = option 1, 2 = option 2, t = tie{bad}"
    if rules.pick_kind == "nickname":
        if nicknames is None:
            return "nicknames first"
        keys = nickname_keys(nicknames)
        return ", ".join(
            f"{key or name} = option 1 is {name}" for key, name in zip(keys, nicknames, strict=True)
        )
    return f"{', '.join(rules.labels[:-1])} or {rules.labels[-1]}"


def pick_words(protocol: str, pick: int | str, beside: bool = False) -> str:
    """A pick as the judge made it, in the words of the screen."""
    if pick == BOTH_BAD:
        return "both bad"
    kind = PROTOCOLS[protocol].pick_kind
    if kind == "side" and not beside and pick in ("left", "right"):
        return "option 1" if pick == "left" else "option 2"
    if kind == "nickname":
        return f"option 1 is {pick}"
    return str(pick)


def parse_answer(protocol: str, text: str, nicknames: tuple[str, str] | None) -> int | str | None:
    """The pick an answer stands for, or None when it is not an answer.

    Preference: option 1 is the pick "left" and option 2 "right", whether the options stand
    side by side or one above the other, so 1/l and 2/r are the same answer."""
    answer = text.strip().lower()
    rules = PROTOCOLS[protocol]
    if rules.pick_kind == "position":
        return int(answer) if answer in rules.labels else None
    if rules.pick_kind == "side":
        words = {"l": "left", "1": "left", "r": "right", "2": "right", "t": "tie"}
        if rules.prefers:
            words.update({"x": BOTH_BAD, BOTH_BAD: BOTH_BAD, "both bad": BOTH_BAD})
        return words.get(answer, answer if answer in PREFERENCE_PICKS else None)
    if nicknames is None:
        return None
    choices = {
        key: name for key, name in zip(nickname_keys(nicknames), nicknames, strict=True) if key
    }
    choices.update({name.lower(): name for name in nicknames})
    return choices.get(answer)


def help_text(protocol: str, sequential: bool) -> list[str]:
    task = PROTOCOLS[protocol].task
    stop = (
        "This design may end before the last trial: it stops by itself when the evidence is "
        "enough, and it tells you nothing else until the end."
        if sequential
        else "You get no feedback until the end."
    )
    return [
        task,
        stop,
        "Reading: when a trial is longer than the screen, space or Enter shows more, b goes "
        "back, g goes to the top, 1, 2 or 3 jumps to that option. At a question: v shows the "
        "trial again, v2 from option 2, b the page before, u takes back your last pick, h "
        "lists your picks so far (change any of them there), s skips this comparison for now "
        "(it comes back after the others).",
        "Typing: arrow keys, Home, End and backspace edit the line before Enter.",
        "q stops the session. Every answer given so far is saved; running the same command "
        "again continues at the first trial you have not judged. Ctrl-C stops too.",
        "Lines that start with a continuation mark were cut at the screen edge: code is "
        "never re-wrapped.",
    ]


# --------------------------------------------------------------------------- closing words


def quit_message(view: JudgeView, result: JudgingResult) -> str:
    """What the judge reads after stopping early (q, Ctrl-C, end of input)."""
    saved = f"{result.judged} of {result.total} trials judged and saved"
    if result.kept_trial is not None:
        saved += (
            f" (your pick for trial {result.kept_trial} was not changed: the earlier pick stands)"
        )
    if result.next_trial is None:
        return f"{saved}."
    again = f"run the same command again to continue at trial {result.next_trial}"
    if view.sequential:
        return f"{saved}; {again}."
    return (
        f"{saved}; {again}. This design has a fixed number of trials: until all are "
        "judged, the analysis reports the run as void."
    )


def closing_message(view: JudgeView, result: JudgingResult, analyze_command: str) -> str:
    """The last line of a session. It never states a score: bt-analyze does that."""
    if result.status == "quit":
        return f"Stopped: {quit_message(view, result)}"
    if result.status == "stopped":
        return (
            f"The session is complete after {result.judged} of {result.total} trials "
            f"(this sequential design stops by itself). Run {analyze_command} to see the result."
        )
    judged = "The trial is judged." if result.total == 1 else f"All {result.total} trials judged."
    return f"{judged} Run {analyze_command} to see the result."


def history_rows(
    view: JudgeView,
    words: Sequence[Pick],
    width: int,
    sep: str,
    words_of: Callable[[int | str], str],
) -> list[str]:
    """A judge's picks so far, two rows each: the trial, the pick (``words_of``), the reason
    and the answers; then the prompt's opening words. Only what the judge answered: nothing
    about sides."""
    rows: list[str] = []
    for word in words:
        line = f"{word.trial:>4}  {words_of(word.pick)}"
        if word.reason:
            line += f" {sep} {sanitize(word.reason)}"
        for question, said in (word.answers or {}).items():
            if isinstance(said, bool):
                line += f" {sep} {question} {'yes' if said else 'no'}"
            else:
                both = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in said.items())
                line += f" {sep} {question} {both}"
        prompt = " ".join(sanitize(view.trials[word.trial - 1].prompt).split())
        rows += wrap_prose_line(line, width)
        rows.append("      " + fit(prompt, max(10, width - 6)))
    return rows


def notice_words(
    trial: int,
    changing: str | None,
    correcting: str | None,
    *,
    skipped: bool,
    arbitrary: bool,
) -> str:
    """The line under the question: a change from the history (``changing``: the pick now, in
    words) or an undo (``correcting``) under way, a trial back after a skip, or the arbitrary
    first pair."""
    if changing is not None:
        return (
            f"Changing your pick for trial {trial} (now: {changing}): answer again, or s to "
            "keep it as it is."
        )
    if correcting is not None:
        return (
            f"Taking back your pick for trial {trial} ({correcting}): pick again (s keeps it). "
            "If you stop now, the earlier pick stands."
        )
    if skipped:
        return "You skipped this comparison earlier; s puts it off again."
    if arbitrary:
        return "This first choice is arbitrary: either nickname is right for trial 1."
    return ""


def fatigue_words(turn: Turn, total: int, every: int) -> str:
    """The break screen: how many were judged in this sitting and how many are left."""
    return (
        f"You have judged {count(turn.judged_now, 'trial')} in this sitting; {turn.left} of "
        f"{total} are left. Judgement gets worse after about {every} comparisons in a row: "
        "consider stopping now and resuming later. Your picks are saved, and running the same "
        f"command again continues at trial {turn.trial.number}."
    )


def stop_words(result: JudgingResult, total: int) -> str:
    """What a fixed design's judge reads before stopping: what is saved, and that an
    unfinished run is void."""
    kept = (
        f" Your pick for trial {result.kept_trial} was not changed: the earlier pick stands."
        if result.kept_trial is not None
        else ""
    )
    return (
        f"Stop now? {result.judged} of {total} trials are judged and saved.{kept} This design "
        "has a fixed number of trials: if it is never finished, the analysis reports the run as "
        "void. Run the same command again later to continue at trial "
        f"{result.next_trial or total}."
    )


def input_ended_words(result: JudgingResult, interactive: bool, resume: str) -> str:
    """The one line when input ends (Ctrl-D, stdin closed) before the session finished."""
    n = result.judged
    kept = f"{n} pick{'' if n == 1 else 's'} kept"
    if result.kept_trial is not None:
        kept += f" (the earlier pick for trial {result.kept_trial} stands)"
    if interactive:
        return (
            f"input ended (Ctrl-D) before the session finished; {kept}; rerun {resume} to continue"
        )
    return (
        f"stdin closed before the session finished; {kept}; rerun {resume} in a terminal to "
        "continue"
    )
