"""How the CLI words the options a library error names (:class:`blindtest.errors.Option`, by
their Python parameter): as the flags of the command that ran. ``judge_id`` is ``--judge-id``,
``kind`` under ``bt-judge`` is ``--judge``, ``swap=False`` is ``--no-swap``, ``protocol=pair``
is ``--protocol pair``.

The command is the one whose context was made last (:func:`speaking_for`, called by every
``BlindtestCommand``). A parameter is looked up by its name, then under the names in
:data:`ALIASES` (where the library's name differs from the click parameter's): first among
that command's options, then among those of every command loaded (``blindtest run`` meets the
options of the stages it runs: ``model_a`` is bt-design's ``--a``); a name no loaded command
has is worded as ``--`` and the name with dashes (``--from-dirs``).
"""

from __future__ import annotations

import re

import click

from blindtest.errors import BlindtestError, Option

#: Library names -> the click parameter names that may hold them, in order. The LLM judge's
#: settings (``LlmSettings``) are ``llm.<field>``; ``blindtest run`` calls its judge option
#: ``judge_kind``.
ALIASES: dict[str, tuple[str, ...]] = {
    "kind": ("judge_kind",),
    "check": ("check_file",),
    "out": ("out_path",),
    "html": ("html_path",),
    "picks": ("picks_files",),
    "against": ("against_files",),
    "export_preferences": ("export_path",),
    "prices": ("price_named",),
    "prices['A']": ("price_a",),
    "prices['B']": ("price_b",),
    "prices['launder']": ("price_launder",),
    "trials": ("trials_text",),
    "pc": ("pc_text",),
    "pd": ("pd_text",),
    "true": ("true_share",),
    "junit": ("junit_path",),
    "open_browser": ("no_browser",),
    "llm.url": ("judge_url",),
    "llm.key_env": ("judge_key_env",),
    "llm.temperature": ("judge_temperature",),
    "llm.template": ("judge_template",),
    "llm.context_tokens": ("judge_context_tokens",),
    "llm.concurrency": ("concurrency",),
    "llm.rpm": ("rpm",),
    "llm.timeout": ("timeout",),
    "llm.max_retries": ("max_retries",),
    "llm.price": ("price",),
    "llm.swap": ("swap",),
    "llm.inconsistent": ("inconsistent",),
    "llm.min_confidence": ("min_confidence",),
}

_speaking: list[click.Command] = []
#: Every command made in this process, in order (``bt-judge`` alone loads one; the
#: ``blindtest`` group loads them all).
_known: list[click.Command] = []


def known(command: click.Command) -> None:
    """A command made (every ``BlindtestCommand`` says so): its flags word errors too."""
    _known.append(command)


def speaking_for(command: click.Command) -> None:
    """Errors from now on are worded with ``command``'s flags."""
    _speaking[:] = [command]


def _find(name: str, commands: list[click.Command]) -> click.Option | None:
    for command in commands:
        params = {p.name: p for p in command.params if isinstance(p, click.Option)}
        for candidate in (name, *ALIASES.get(name, ())):
            if candidate in params:
                return params[candidate]
    return None


def _param(name: str) -> click.Option | None:
    return _find(name, _speaking) or _find(name, _known)


_ENTRY = re.compile(r"^(\w+)\[['\"]?([^'\"\]]+)['\"]?\]$")


def flag_of(option: Option) -> str:
    """``option`` as the running command's flag, with its value when it has one. An entry
    of a mapping (``prices['fast']``, a candidate's price) is its option with the key, and
    the value after ``=`` (``--price fast=2.5,10``)."""
    param = _param(option.name)
    entry = _ENTRY.match(option.name) if param is None else None
    if entry is not None and _param(entry.group(1)) is not None:
        key = entry.group(2) if option.value is None else f"{entry.group(2)}={option.value}"
        return flag_of(Option(entry.group(1), key))
    if param is None:
        flag = "--" + option.name.rpartition(".")[2].replace("_", "-")
        if option.value is False:
            return "--no-" + flag[2:]
        return flag if option.value in (None, True) else f"{flag} {option.value}"
    longest = max(param.opts, key=len)
    if option.name == "open_browser":  # the library's switch is the flag's opposite
        return longest
    if param.is_flag or isinstance(option.value, bool):
        if option.value is False and param.secondary_opts:
            return max(param.secondary_opts, key=len)
        return longest
    return longest if option.value is None else f"{longest} {option.value}"


def message(error: BlindtestError) -> str:
    """The error's one line as the command says it."""
    return error.worded(flag_of)
