"""Typed errors of the library, each carrying the process exit code it maps to.

This module must never import click: the CLI layer (``blindtest.cli._exits``) is the one
place that turns these into output and exit codes.

Exit codes (DESIGN.md): 0 success; 1 the check itself failed; 2 bad input or usage;
3 an endpoint failed after retries; 4 a pre-registered decision's claim is refuted; 5 a
pre-registered decision is not settled at this size; 130 interrupted. 4 and 5 are outcomes,
not errors: bt-analyze returns them (``blindtest.analysis.decision.EXIT_CODES``), nothing
raises them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "EXIT_NOT_SETTLED",
    "EXIT_REFUTED",
    "AuthFailed",
    "BadInput",
    "BadValue",
    "BlindtestError",
    "CheckFailed",
    "ConnectTimeout",
    "ConnectionRefused",
    "EndpointFailed",
    "EndpointRejected",
    "EndpointTimeout",
    "EndpointUnavailable",
    "EndpointUnreachable",
    "Interrupted",
    "Option",
    "PromptTooLong",
    "QuotaExceeded",
    "RateLimited",
    "message_of",
    "option",
    "worded",
]

# Private-use code points around an option's name and value inside a message: no message,
# file name or value a person types holds them, so the option stays a thing of its own as the
# message is composed (an f-string, a problem a helper returns) and is worded only when shown.
_OPEN, _EQUALS, _CLOSE = "\ue000", "\ue001", "\ue002"
_MARK = re.compile(f"{_OPEN}([^{_EQUALS}{_CLOSE}]*)(?:{_EQUALS}([^{_CLOSE}]*))?{_CLOSE}")
_TRUE, _FALSE = "\ue003", "\ue004"


@dataclass(frozen=True, slots=True)
class Option:
    """An option of the call a message is about, named by its Python parameter (``judge_id``,
    ``llm.min_confidence`` for a field of ``LlmSettings``), and the value the message shows
    with it, if any (a metavar such as ``MODEL`` or a value such as ``pair``; ``True`` or
    ``False`` for a switch). The library never words an option as a command-line flag: the
    CLI does (``--judge-id``, ``--no-swap``), a Python caller reads the parameter."""

    name: str
    value: str | bool | None = None

    def python(self) -> str:
        """How a Python caller reads it: ``judge_id``, ``protocol=pair``, ``swap=False``."""
        return self.name if self.value is None else f"{self.name}={self.value}"


def option(name: str, value: object = None) -> str:
    """The option ``name`` (its Python parameter), with ``value`` when the message shows one,
    as it goes inside an error's message: ``f"{option('judge_id')}: {problem}"``. The error
    keeps it as an :class:`Option`; ``str(error)`` words it for Python
    (:meth:`Option.python`), the CLI as its flag."""
    if value is None:
        return f"{_OPEN}{name}{_CLOSE}"
    if isinstance(value, bool):
        return f"{_OPEN}{name}{_EQUALS}{_TRUE if value else _FALSE}{_CLOSE}"
    return f"{_OPEN}{name}{_EQUALS}{value}{_CLOSE}"


def _parts(message: str) -> tuple[str | Option, ...]:
    parts: list[str | Option] = []
    at = 0
    for match in _MARK.finditer(message):
        if match.start() > at:
            parts.append(message[at : match.start()])
        raw = match.group(2)
        value: str | bool | None = {_TRUE: True, _FALSE: False}.get(raw, raw) if raw else raw
        parts.append(Option(match.group(1), value))
        at = match.end()
    if at < len(message):
        parts.append(message[at:])
    return tuple(parts)


def worded(message: str, name_of: Callable[[Option], str] = Option.python) -> str:
    """``message`` with each :func:`option` in it worded by ``name_of``."""
    return "".join(p if isinstance(p, str) else name_of(p) for p in _parts(message))


#: A pre-registered decision's outcomes as exit codes (bt-analyze, blindtest run).
EXIT_REFUTED = 4
EXIT_NOT_SETTLED = 5


class BlindtestError(Exception):
    """Base class. ``str(error)`` is the one line shown to the user.

    The message may name options of the call (:func:`option`): ``parts`` holds them as
    :class:`Option` between the text, ``str(error)`` shows them as Python parameters, and
    :meth:`worded` as a caller words them (the CLI: as its flags). ``template`` is the message
    as given, for an error that extends another's message and keeps its options.
    """

    exit_code: int = 1

    def __init__(self, *args: object) -> None:
        self.template: str = str(args[0]) if args else ""
        if args and isinstance(args[0], str):
            args = (worded(args[0]), *args[1:])
        super().__init__(*args)

    @property
    def parts(self) -> tuple[str | Option, ...]:
        """The message: text, and the options it names."""
        return _parts(self.template)

    @property
    def options(self) -> tuple[Option, ...]:
        """The options the message names, in order."""
        return tuple(p for p in self.parts if isinstance(p, Option))

    def worded(self, name_of: Callable[[Option], str]) -> str:
        """The message with each option worded by ``name_of`` (the CLI: its flag)."""
        return worded(self.template, name_of)


class BadInput(BlindtestError):
    """Bad input or usage: nothing was written (exit 2)."""

    exit_code = 2


class BadValue(BadInput, ValueError):
    """A pure function's argument outside what it takes (a pairing mode, a grid value): a
    ``ValueError`` to code that calls it, ``BadInput`` (exit 2) at the command line, and its
    message may name options as every error's does."""


def message_of(error: BaseException) -> str:
    """An error's message with its options kept (:attr:`BlindtestError.template`), to extend
    into another error's; any other exception's ``str``."""
    return error.template if isinstance(error, BlindtestError) else str(error)


class CheckFailed(BlindtestError):
    """The check itself failed: verify mismatch, tally unusable, analysis void (exit 1)."""

    exit_code = 1


class EndpointFailed(BlindtestError):
    """An endpoint failed after retries; what was fetched is kept (exit 3).

    What the server said, when it said anything, is kept as structure rather than only in the
    message: ``status`` (HTTP), ``code``, ``type`` and ``param`` from its error body, and
    ``server_message`` (its own words); ``attempts``, the requests sent before the client
    gave up, when it raised this for one request.
    """

    exit_code = 3
    attempts: int | None = None
    status: int | None = None
    code: str | None = None
    type: str | None = None
    param: str | None = None
    server_message: str | None = None


class RateLimited(EndpointFailed):
    """The endpoint kept answering 429 after every retry."""


class AuthFailed(EndpointFailed):
    """The endpoint refused the key (401/403)."""


class Interrupted(BlindtestError):
    """Ctrl-C: everything done so far is kept and a rerun resumes (exit 130)."""

    exit_code = 130


class EndpointRejected(EndpointFailed):
    """The endpoint refused the request itself (400, 404, 422, other 4xx): retrying cannot help."""


class PromptTooLong(EndpointRejected):
    """The prompt does not fit the model's context (or the server's body limit): one slot's
    failure, not the run's."""


class QuotaExceeded(EndpointFailed):
    """A billing error (OpenAI's 429 ``insufficient_quota``): never retried, stops the run."""


class EndpointUnavailable(EndpointFailed):
    """The endpoint kept answering 5xx, 408 or 409 after every retry."""


class EndpointUnreachable(EndpointFailed):
    """No usable connection: reset, or closed mid-answer, after every retry."""


class ConnectionRefused(EndpointUnreachable):
    """Nothing listens at the endpoint's address (the server is down, or the URL is wrong):
    it stops the run at once, unless the endpoint had answered before (then it is retried, as
    a server restarting would refuse for a moment)."""


class EndpointTimeout(EndpointFailed):
    """The endpoint did not connect or answer within the timeout, after every retry."""


class ConnectTimeout(EndpointTimeout):
    """No connection within the connect timeout: nothing answered at the address at all (a host
    that drops the packets, a firewall, a wrong port behind one). Unlike a refused connection
    it proves nothing, so it is retried, but a host that has not answered in this run gets
    only a few retries and then stops the run: the same wait would repeat for every request.
    Once the host has answered, it is a busy server and gets the ordinary retries."""
