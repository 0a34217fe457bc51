"""A key variable named in the design but unset, said as such before any request: with the
likely misspelling when a similar name is exported (``SIM_KEY`` in the design, ``SIMKEY`` in
the shell). Only variable *names* are read and printed, never a value.

A remote endpoint with its variable unset is refused by the client before anything is sent
(:meth:`blindtest.transport.endpoint.Endpoint.check_key`); this adds the misspelling to that
line. A local server (127.0.0.1, localhost) may need no key, so it is asked without one,
unless a similar name is exported: then the key was meant, and the run stops before the first
request."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping

from blindtest.errors import BadInput
from blindtest.transport.endpoint import Endpoint

__all__ = ["check_key_names", "similar_name"]

_ROLES = {"launder": "the launderer", "judge": "the LLM judge"}


def _folded(name: str) -> str:
    return "".join(ch for ch in name.upper() if ch.isalnum())


def similar_name(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """An exported, non-empty variable whose name is ``name`` misspelt: the same letters
    but for case, ``_`` and ``-`` (``SIMKEY``, ``sim_key``), else one close by edit
    (``OPENAI_API_KEYS``); None when there is none."""
    environ = os.environ if environ is None else environ
    names = [n for n, value in environ.items() if value and n != name]
    folded = _folded(name)
    same = sorted(n for n in names if _folded(n) == folded)
    if same:
        return same[0]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.85)
    return close[0] if close else None


def unset_line(role: str, name: str, model: str, environ: Mapping[str, str] | None = None) -> str:
    """Why a run cannot ask ``role``: ``name`` is not set (and what probably is)."""
    who = _ROLES.get(role, f"side {role}")
    near = similar_name(name, environ)
    if near is None:
        return (
            f"{who}: environment variable {name} is not set; export it with the API key for {model}"
        )
    other = (
        f"give --judge-key-env {near}"
        if role == "judge"
        else f"design again with --{role.lower()}-key-env {near}"
    )
    return (
        f"{who}: environment variable {name} is not set, but {near} is (a misspelling?); "
        f'export {name}="${near}", or {other}'
    )


def check_key_names(
    endpoints: Mapping[str, Endpoint], environ: Mapping[str, str] | None = None
) -> None:
    """Refuse (``BadInput``, before any request) an endpoint whose key variable is unset when
    a key is needed (a remote URL), or when a similar name is exported (a local server then
    was meant to get the key)."""
    environ = os.environ if environ is None else environ
    for role, endpoint in endpoints.items():
        name = endpoint.key_env or endpoint.unset_key_env
        if name is None or environ.get(name):
            continue
        if endpoint.key_env is not None or similar_name(name, environ) is not None:
            raise BadInput(unset_line(role, name, endpoint.model, environ))
