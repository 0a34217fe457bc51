"""Every byte in a run directory goes through this package.

It owns the run-directory file names, JSON and JSONL reading and writing (orjson), atomic
replacement (temporary file in the same directory, fsync, rename), one-write-per-line JSONL
appends, the torn-line tolerant reader, the output guard (``claim_output``: no file of another
kind, no input, nothing that is not an artifact is ever written over, ``--force`` or not),
schema validation on read and on write, and SHA-256 over exact bytes.
Every file it writes gets the same mode (0666 less the umask), and an OS error while writing is
``BadInput`` naming the path and the reason. No other module opens run files.

The package is that one owner, split by job; its names are used from here
(``artifacts.read_jsonl``), each defined in one module of it:
:mod:`~blindtest.rundir.artifacts.names` (the file names),
:mod:`~blindtest.rundir.artifacts.encoding`
(serializer, SHA-256), :mod:`~blindtest.rundir.artifacts.validation` (schemas),
:mod:`~blindtest.rundir.artifacts.documents` (JSON documents read),
:mod:`~blindtest.rundir.artifacts.guard`
(the output guard), :mod:`~blindtest.rundir.artifacts.atomic` (atomic files),
:mod:`~blindtest.rundir.artifacts.jsonl` (JSONL written, appended, read),
:mod:`~blindtest.rundir.artifacts.design` (the design and its hash) and
:mod:`~blindtest.rundir.artifacts.columns` (a long list held by column). The run and picks-file
locks are :mod:`blindtest.rundir.locking`'s.
"""

from blindtest.rundir.artifacts.atomic import (
    cannot_write,
    file_mode,
    make_dir,
    write_bytes_atomic,
    write_json,
)
from blindtest.rundir.artifacts.columns import Columns
from blindtest.rundir.artifacts.design import (
    LONG_LISTS,
    PROVENANCE_FIELDS,
    DesignDiffers,
    LoadedDesign,
    design_difference,
    load_design,
    load_design_lean,
    write_design,
)
from blindtest.rundir.artifacts.documents import read_bytes, read_design_hash, read_json
from blindtest.rundir.artifacts.encoding import (
    JsonObject,
    dump_json,
    dump_line,
    sha256_bytes,
    sha256_file,
    sha256_text,
)
from blindtest.rundir.artifacts.guard import (
    TORN,
    artifact_kind,
    claim_output,
    claim_report,
    refuse_overwrite,
)
from blindtest.rundir.artifacts.jsonl import (
    JsonlAppender,
    JsonlContents,
    LineReader,
    iter_jsonl,
    iter_lines,
    read_jsonl,
    reading_once,
    repair_torn_tail,
    write_jsonl,
)
from blindtest.rundir.artifacts.names import (
    AUDIT,
    BATCHES,
    DESIGN,
    DESIGN_HASH,
    DOWNSTREAM_OF_DESIGN,
    E_VALUES,
    GENERATION,
    HTML,
    JUNIT,
    LOCK,
    PICKS,
    REPORT,
    RESPONSES,
    RUN_FILE_KINDS,
    TRIALS,
    WEB_LINKS,
    e_values_name,
)
from blindtest.rundir.artifacts.validation import (
    MAJOR_VERSION,
    SCHEMA_MAJORS,
    SCHEMA_NAMES,
    schema_file,
    schema_tag,
    tag_major,
    validate,
    validator,
)

__all__ = [
    "AUDIT",
    "BATCHES",
    "DESIGN",
    "DESIGN_HASH",
    "DOWNSTREAM_OF_DESIGN",
    "E_VALUES",
    "GENERATION",
    "HTML",
    "JUNIT",
    "LOCK",
    "LONG_LISTS",
    "MAJOR_VERSION",
    "PICKS",
    "PROVENANCE_FIELDS",
    "REPORT",
    "RESPONSES",
    "RUN_FILE_KINDS",
    "SCHEMA_MAJORS",
    "SCHEMA_NAMES",
    "TORN",
    "TRIALS",
    "WEB_LINKS",
    "Columns",
    "DesignDiffers",
    "JsonObject",
    "JsonlAppender",
    "JsonlContents",
    "LineReader",
    "LoadedDesign",
    "artifact_kind",
    "cannot_write",
    "claim_output",
    "claim_report",
    "design_difference",
    "dump_json",
    "dump_line",
    "e_values_name",
    "file_mode",
    "iter_jsonl",
    "iter_lines",
    "load_design",
    "load_design_lean",
    "make_dir",
    "read_bytes",
    "read_design_hash",
    "read_json",
    "read_jsonl",
    "reading_once",
    "refuse_overwrite",
    "repair_torn_tail",
    "schema_file",
    "schema_tag",
    "sha256_bytes",
    "sha256_file",
    "sha256_text",
    "tag_major",
    "validate",
    "validator",
    "write_bytes_atomic",
    "write_design",
    "write_json",
    "write_jsonl",
]
