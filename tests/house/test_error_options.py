"""Library errors name options by their Python parameter; the CLI words them as its flags.

A message holds an option as :func:`blindtest.errors.option` (kept as structure through
f-strings and the problems helpers return); ``str(error)`` shows the parameter, the command
line shows the flag of the command that ran. No library module writes a flag into an error.
"""

from __future__ import annotations

import ast
import pickle
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from blindtest import errors
from blindtest.cli import _flags
from blindtest.cli._group import cli
from blindtest.cli.judge import judge as judge_command
from blindtest.cli.run import run as run_command
from blindtest.errors import BadInput, EndpointFailed, Option, option, worded

from conftest import Invoke

PACKAGE = Path(__file__).resolve().parents[2] / "blindtest"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
#: A message may show a whole command to run (``bt-judge RUN --web``): its flags are the
#: command's, not options of the call.
COMMAND = re.compile(r"\b(bt-[a-z]+|blindtest [a-z]+)\b")


def test_an_error_keeps_its_options_and_shows_python_names() -> None:
    error = BadInput(
        f"{option('judge_id')}: no spaces; use {option('protocol', 'pair')} or "
        f"{option('swap', False)}"
    )
    assert str(error) == "judge_id: no spaces; use protocol=pair or swap=False"
    assert error.options == (
        Option("judge_id"),
        Option("protocol", "pair"),
        Option("swap", False),
    )
    assert error.args == (str(error),)
    assert repr(error) == "BadInput('judge_id: no spaces; use protocol=pair or swap=False')"
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


def test_a_message_without_options_is_as_given() -> None:
    error = EndpointFailed("nothing listens at http://127.0.0.1:9/v1")
    assert str(error) == error.template == "nothing listens at http://127.0.0.1:9/v1"
    assert error.parts == ("nothing listens at http://127.0.0.1:9/v1",)
    assert error.worded(lambda o: "never") == str(error)
    assert str(BadInput()) == ""


def test_an_option_survives_a_message_built_in_steps() -> None:
    problem = f"{option('trials')} must be at least 2"  # a helper returns it
    error = BadInput(f"design.json: {problem}")
    assert str(error) == "design.json: trials must be at least 2"
    extended = BadInput(f"{error.template}; fix it")
    assert extended.options == (Option("trials"),)
    assert worded(problem, lambda o: f"<{o.name}>") == "<trials> must be at least 2"


def _worded_under(command: click.Command, message: str) -> str:
    _flags.speaking_for(command)
    return _flags.message(BadInput(message))


def test_the_cli_words_each_option_as_the_flag_of_the_command_that_ran() -> None:
    judge = judge_command
    assert _worded_under(judge, f"{option('judge_id')}: bad") == "--judge-id: bad"
    assert _worded_under(judge, f"{option('kind', 'llm:MODEL')}") == "--judge llm:MODEL"
    assert _worded_under(judge, f"{option('llm.swap', False)}") == "--no-swap"
    assert _worded_under(judge, f"{option('llm.template', 'x.txt')}") == "--judge-template x.txt"
    assert _worded_under(judge, f"{option('check', 'FILE')}") == "--check FILE"
    assert _worded_under(judge, f"{option('check', True)}") == "--check"
    assert _worded_under(judge, f"{option('open_browser', False)}") == "--no-browser"
    # blindtest run calls its judge option judge_kind; the design's options are bt-design's.
    assert _worded_under(run_command, f"{option('kind', 'bot:length')}") == "--judge bot:length"
    assert _worded_under(run_command, f"{option('html')}") == "--html"
    assert _worded_under(run_command, f"{option('strip_identity', False)}") == (
        "--no-strip-identity"
    )
    # An entry of a mapping: a side's own flag, else the option with its key.
    generate = cli.commands["generate"]
    fast, side_a = option("prices['fast']", "2.5,10"), option("prices['A']")
    assert _worded_under(generate, f"{fast} or {side_a}") == "--price fast=2.5,10 or --price-a"
    assert str(BadInput(f"{fast} or {side_a}")) == "prices['fast']=2.5,10 or prices['A']"
    # An option the command does not have (another stage's, in a chain): its dashed name.
    assert _worded_under(judge, f"{option('a_url', 'URL')}") == "--a-url URL"


def test_a_refusal_on_the_command_line_names_the_flag(tmp_path: Path, invoke: Invoke) -> None:
    result = invoke("judge", tmp_path, "--judge", "llm:", "--check")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "blindtest: error: --judge llm:MODEL: name the judge model, e.g. --judge llm:gpt-4o"
    ]


def _library_modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] != "cli"]


def _message_texts(node: ast.AST) -> Iterator[str]:
    """The string constants of a message, leaving out calls inside it (a command a helper
    builds, such as ``stage_command("judge", run, "--web")``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value
        elif not isinstance(child, ast.Call):
            yield from _message_texts(child)


#: What makes an error from a message: the error classes, and the endpoint's ``_bad``.
MAKERS = {name for name in errors.__all__ if name[0].isupper()} | {"_bad"}


def _error_made(node: ast.AST) -> ast.Call | None:
    """The call that makes an error here: a ``raise``'s, or an error class called (an error
    returned to be raised elsewhere)."""
    if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
        return node.exc
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name in MAKERS:
            return node
    return None


def _flags_raised(path: Path) -> list[str]:
    """Flags written into the message of an error (string constants and f-strings), but for
    those of a whole command the message shows."""
    where = path.relative_to(PACKAGE.parent) if path.is_relative_to(PACKAGE) else path.name
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        made = _error_made(node)
        if made is None:
            continue
        for argument in [*made.args, *(k.value for k in made.keywords)]:
            texts = [argument.value] if isinstance(argument, ast.Constant) else []
            for text in [*texts, *_message_texts(argument)]:
                if not isinstance(text, str):
                    continue
                command = COMMAND.search(text)
                for flag in FLAG.findall(text[: command.start()] if command else text):
                    found.append(f"{where}:{made.lineno} {flag}")
    return sorted(set(found), key=found.index)


def test_no_library_error_writes_a_flag() -> None:
    found = [hit for path in _library_modules() for hit in _flags_raised(path)]
    assert found == [], "\n".join(found)


def test_the_flag_scan_sees_a_flag_and_not_a_command(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f(x):\n"
        '    if x:\n        raise ValueError(f"--trials {x}: too few")\n'
        '    if x is None:\n        raise BadInput("use --force")\n'
        "    raise BadInput(f\"rerun {command('--batch')} or bt-judge RUN --web\")\n"
    )
    assert [hit.split()[-1] for hit in _flags_raised(module)] == ["--trials", "--force"]


def _named_options() -> dict[str, list[str]]:
    """Every option a library module names by a literal (``option("judge_id")``)."""
    found: dict[str, list[str]] = {}
    for path in _library_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id == "option" and node.args and isinstance(node.args[0], ast.Constant):
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                found.setdefault(str(node.args[0].value), []).append(where)
    return found


def test_every_option_the_library_names_is_a_flag_of_some_command() -> None:
    named = _named_options()
    assert {"judge_id", "kind", "llm.min_confidence", "model_a", "force"} <= set(named)
    _flags.speaking_for(judge_command)
    missing = {name: where for name, where in named.items() if _flags._param(name) is None}
    assert missing == {}


@pytest.mark.parametrize("name", sorted(_flags.ALIASES))
def test_every_alias_names_a_parameter_of_some_command(name: str) -> None:
    params = {p.name for command in cli.commands.values() for p in command.params if p.name}
    assert set(_flags.ALIASES[name]) & params, name
