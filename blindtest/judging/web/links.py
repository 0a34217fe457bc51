"""The judging page's links, kept across restarts: ``RUN/web-links.jsonl``.

Each time ``bt-judge --web`` starts it gives every reviewer a new random token and prints
its link. This file keeps one line per token given: the reviewer, the picks file the link
judges into, the port it was served on and the token's SHA-256, never the token itself (a
link is a password; the file alone opens nothing). A restart for the same reviewer and picks
file accepts every token recorded for them, and serves on the last recorded port when it is
free, so a link sent before keeps working. Deleting the file retires every earlier link.

Lines are appended whole (one ``write`` each, in append mode, synced), so two ``bt-judge
--web`` judging the same run into different files can share the file; a torn last line (a
crash mid-write) is skipped. Nothing else in the run depends on this file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from blindtest.errors import BadInput
from blindtest.rundir import artifacts

#: The file's name in the run directory.
LINKS = artifacts.WEB_LINKS


def token_hash(token: str) -> str:
    """The hex SHA-256 of a token, as the file keeps it."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def picks_key(run_dir: Path, out: Path) -> str:
    """How a line names its picks file: relative to the run when inside it, else absolute."""
    resolved = out.resolve()
    try:
        return resolved.relative_to(run_dir.resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


@dataclass(frozen=True, slots=True)
class Link:
    """One token given: whose, for which picks file, on which port."""

    judge: str
    picks: str
    sha256: str
    port: int


class LinkBook:
    """``RUN/web-links.jsonl``: read once when a page starts, appended to as links are given."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / LINKS
        self.links = self._read()

    def _read(self) -> tuple[Link, ...]:
        try:
            text = self.path.read_text("utf-8")
        except FileNotFoundError:
            return ()
        except (OSError, UnicodeDecodeError) as err:
            raise BadInput(
                f"{self.path}: cannot be read ({err}); delete it to start new links"
            ) from None
        lines = text.split("\n")
        found = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines):  # a torn last line: a crash mid-write
                    continue
                raise BadInput(
                    f"{self.path}:{number}: not a JSON line; delete the file to start new links "
                    "(earlier links then stop working)"
                ) from None
            artifacts.validate(record, "web_links", f"{self.path}:{number}")
            found.append(
                Link(record["judge"], record["picks"], record["sha256"], int(record["port"]))
            )
        return tuple(found)

    def hashes(self, judge: str, picks: str) -> tuple[str, ...]:
        """The hashes of the tokens given before to ``judge`` for ``picks``."""
        return tuple(x.sha256 for x in self.links if x.judge == judge and x.picks == picks)

    def last_port(self, seats: Iterable[tuple[str, str]]) -> int | None:
        """The port the latest link of any of these (judge, picks) seats was served on."""
        wanted = set(seats)
        ports = [x.port for x in self.links if (x.judge, x.picks) in wanted]
        return ports[-1] if ports else None

    def record(self, judge: str, picks: str, token: str, port: int) -> None:
        """Append the line for a token just given (its hash only)."""
        digest = token_hash(token)
        record = {
            "schema": artifacts.schema_tag("web_links"),
            "judge": judge,
            "picks": picks,
            "sha256": digest,
            "port": port,
            "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.links = (*self.links, Link(judge, picks, digest, port))
