"""Library errors name options by their Python parameter; the CLI words them as its flags.

A message holds an option as :func:`blindtest.errors.option` (kept as structure through
f-strings and the problems helpers return); ``str(error)`` shows the parameter, the command
line shows the flag of the command that ran. No library module writes a flag into an error.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import click
import pytest

from blindtest.cli import _flags
from blindtest.cli.judge import judge as judge_command
from blindtest.cli.run import run as run_command
from blindtest.errors import BadInput, EndpointFailed, Option, option, worded

from conftest import Invoke


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
    # An option the command does not have (another stage's, in a chain): its dashed name.
    assert _worded_under(judge, f"{option('a_url', 'URL')}") == "--a-url URL"


def test_a_refusal_on_the_command_line_names_the_flag(tmp_path: Path, invoke: Invoke) -> None:
    result = invoke("judge", tmp_path, "--judge", "llm:", "--check")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "blindtest: error: --judge llm:MODEL: name the judge model, e.g. --judge llm:gpt-4o"
    ]


@pytest.mark.parametrize("name", sorted(_flags.ALIASES))
def test_every_alias_names_a_parameter_of_some_command(name: str) -> None:
    from blindtest.cli._group import cli

    params = {p.name for command in cli.commands.values() for p in command.params if p.name}
    assert set(_flags.ALIASES[name]) & params, name
