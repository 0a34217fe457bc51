"""What bt-generate sends: a side's system prompt and messages, its endpoint, and the
request digest a row keeps (what determined an answer)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from blindtest.model.candidates import candidates_of
from blindtest.model.derived import trial_slot_seed
from blindtest.model.normalize import launder_messages
from blindtest.model.protocols import protocol_of
from blindtest.model.sides import fill_template, side_system
from blindtest.model.slots import LAUNDER, Slot, Work
from blindtest.rundir.artifacts import Columns
from blindtest.rundir.types import DesignRecord
from blindtest.transport.addresses import is_loopback
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.wire import ChatMessage, token_field_for


def system_prompt(design: DesignRecord, side: str | None = None) -> str | None:
    """The system prompt a side gets: its own or the design's shared one, plus the
    length-band instruction (``side`` None: the shared one)."""
    parts = [design.get("system") if side is None else side_system(design, side)]
    band = design["normalization"]["length_band"]
    if band is not None:
        parts.append(band["instruction"])
    text = "\n\n".join(p for p in parts if p)
    return text or None


#: The prompts list last indexed by id, its length, and the index: one dict lookup per request
#: instead of a scan of every prompt (that scan made bt-generate quadratic).
_PROMPT_INDEX: list[tuple[Any, int, dict[str, Any]]] = []


def _prompt_by_id(prompts: Sequence[Any], prompt_id: str) -> Any:
    if isinstance(prompts, Columns):  # a lean design: its own index, no dict per prompt
        if not prompts.has_key("messages"):
            return None  # no conversations: nothing but the text is needed
        return prompts[prompts.position("id", prompt_id, last=True)]
    if (
        not _PROMPT_INDEX
        or _PROMPT_INDEX[0][0] is not prompts
        or _PROMPT_INDEX[0][1] != len(prompts)
    ):
        index: dict[str, Any] = {}
        for prompt in prompts:
            index.setdefault(prompt["id"], prompt)  # the first of a repeated id, as before
        _PROMPT_INDEX[:] = [(prompts, len(prompts), index)]
    return _PROMPT_INDEX[0][2].get(prompt_id)


def prompt_texts(design: DesignRecord) -> Callable[[str], str]:
    """A prompt's text by id (a lean design's prompts are looked up by position; a list of
    dicts is indexed once)."""
    prompts: Any = design["prompts"]
    if isinstance(prompts, Columns):
        return lambda prompt_id: str(
            prompts.value(prompts.position("id", prompt_id, last=True), "text")
        )
    texts = {p["id"]: p["text"] for p in prompts}
    return texts.__getitem__


def messages_for(
    design: DesignRecord, prompt_text: str, side: str | None = None, prompt_id: str = ""
) -> list[ChatMessage]:
    """What ``side`` is sent for a prompt: its system prompt, a conversation's earlier turns
    (when ``prompt_id`` names one), then the prompt (through the side's template, when it has
    one): the side answers the last turn."""
    messages: list[ChatMessage] = []
    system = system_prompt(design, side)
    if system is not None:
        messages.append({"role": "system", "content": system})
    record = _prompt_by_id(design["prompts"], prompt_id) if prompt_id else None
    for turn in (record or {}).get("messages", [])[:-1]:
        messages.append({"role": turn["role"], "content": turn["content"]})
    template = None if side is None else design["models"][side].get("template")
    messages.append({"role": "user", "content": fill_template(template, prompt_text)})
    return messages


def endpoints_for(
    design: DesignRecord, environ: Mapping[str, str] | None = None
) -> dict[str, Endpoint]:
    """Client endpoints for A, B or each candidate (and the launderer). A local server
    (127.0.0.1, localhost) needs no key: when the named variable is unset, no Authorization
    header is sent (and a 401/403 says that variable is not set)."""
    environ = os.environ if environ is None else environ
    models = design["models"]
    specs: dict[str, dict[str, Any]] = {
        side: {**models[side], **models[side]["params"]}
        for side in candidates_of(design)  # in the design's order (design.json sorts its keys)
        if design["source"]["kind"] == "endpoints"
    }
    launder = design["normalization"]["launder"]
    if launder is not None:
        specs[LAUNDER] = {**launder, "temperature": None, "max_tokens": None}
    endpoints = {}
    for role, spec in specs.items():
        key_env, unset = spec["key_env"], None
        if not environ.get(key_env) and is_loopback(spec["base_url"]):
            key_env, unset = None, key_env
        endpoints[role] = Endpoint(
            base_url=spec["base_url"],
            model=spec["model"],
            key_env=key_env,
            unset_key_env=unset,
            temperature=spec.get("temperature"),
            top_p=spec.get("top_p"),
            max_tokens=spec.get("max_tokens"),
            max_tokens_field=token_field_for(spec["base_url"]),
            extra=spec.get("extra_params") or None,
        )
    return endpoints


# --------------------------------------------------------------------------- what determined a row

#: The row fields that say what determined an answer (the request, or the imported file).
DETERMINED_BY = ("request_sha256", "source_sha256")


def request_sha256(body: Mapping[str, object]) -> str:
    """SHA-256 of a request body in canonical form (orjson, keys sorted at every level, no
    spaces): the same request gives the same hash whatever order its fields were set in."""
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


class SlotRequests:
    """What each slot asks for now, by the design: the body a live run sends (the per-slot
    seed included, also where the server refuses seeds: the row's ``seed`` says what was
    sent), the same body a batch export writes; and which row fields and values record it."""

    def __init__(self, design: DesignRecord) -> None:
        self.design = design
        self.imported = design["source"]["kind"] == "dirs"
        self._endpoints = endpoints_for(design, environ={})  # the bodies only: no key is read
        self._text = prompt_texts(design)

    def body(self, work: Work) -> dict[str, object]:
        if work.stage == LAUNDER:
            messages: Any = launder_messages(work.source or "")
            return self._endpoints[LAUNDER].request_body(messages)
        slot = work.slot
        seed = trial_slot_seed(self.design, slot.trial, slot.slot)
        text = self._text(slot.prompt_id)
        messages = messages_for(self.design, text, slot.side, slot.prompt_id)
        return self._endpoints[slot.side].request_body(messages, seed=seed)

    def determined_by(self, work: Work) -> tuple[str, str]:
        """(field, hex SHA-256) a row for ``work`` records: the request's hash, or for a
        --from-dirs answer the hash of the file it was read from (as the design holds it)."""
        if self.imported and work.stage != LAUNDER:
            files = self.design["source"]["files"][work.slot.prompt_id][work.slot.side]
            return "source_sha256", str(files[_variant_for(self.design, work.slot)])
        return "request_sha256", request_sha256(self.body(work))

    def model(self, work: Work) -> str:
        return _role_model(self.design, LAUNDER if work.stage == LAUNDER else work.slot.side)

    def matches(self, row: Mapping[str, Any], work: Work) -> bool:
        """Whether ``row`` answers what ``work`` asks now. A row from before rows recorded
        their request (no hash) is checked by the model it names."""
        if not any(key in row for key in DETERMINED_BY):
            return bool(row.get("model") == self.model(work))
        key, expected = self.determined_by(work)
        return bool(row.get(key) == expected)


def _role_model(design: DesignRecord, role: str) -> str:
    if role == LAUNDER:
        return str(design["normalization"]["launder"]["model"])
    return str(design["models"][role]["model"])


def _variant_for(design: DesignRecord, slot: Slot) -> str:
    """Which file answers a slot: the doubled side's two triangle slots take variants 1 and 2
    in slot order; every other slot takes the candidate's first output."""
    variants: list[str] = sorted(design["source"]["files"][slot.prompt_id][slot.side])
    if not protocol_of(design).repeats_side:
        return variants[0]
    entry = design["arrangement"][slot.trial - 1]
    if slot.side != entry["doubled"]:
        return variants[0]
    twins = [p for p in (1, 2, 3) if p != entry["odd_position"]]
    return str(twins.index(slot.slot) + 1)
