"""Prompt files: formats, and one clear error naming the line or byte for each bad input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from blindtest.errors import BadInput
from blindtest.model.prompts import demo_prompts, load_prompts

MakeFile = Callable[..., Path]


def test_txt_ignores_blank_and_comment_lines(prompts_file: MakeFile) -> None:
    path = prompts_file("# heading\n\nfirst prompt\n   \n  second prompt  \n#x\n")
    prompts = load_prompts(path)
    assert [(p.id, p.text, p.line) for p in prompts] == [
        ("p001", "first prompt", 3),
        ("p002", "second prompt", 5),
    ]


def test_jsonl_reads_id_tags_reference_and_check(prompts_file: MakeFile) -> None:
    path = prompts_file(
        '{"prompt": "one", "id": "db-1", "tags": ["db"], "reference": "ref"}\n'
        '\n{"prompt": "two", "check": {"regex": "^ok"}}\n',
        name="p.jsonl",
    )
    one, two = load_prompts(path)
    assert (one.id, one.tags, one.reference) == ("db-1", ("db",), "ref")
    assert (two.id, two.check, two.line) == ("p002", {"regex": "^ok"}, 3)


def test_utf8_bom_is_accepted(prompts_file: MakeFile) -> None:
    assert load_prompts(prompts_file(b"\xef\xbb\xbfhello\n"))[0].text == "hello"


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ("", "p.txt", r"no prompts found"),
        ("# only comments\n\n", "p.txt", r"no prompts found"),
        (b"ok\nbad \xff byte\n", "p.txt", r"not UTF-8: byte 0xff at offset 7 \(line 2\)"),
        ("one\ntwo\n  one  \n", "p.txt", r"line 3 repeats the prompt on line 1"),
        ("a  b\nc\na\tb\n", "p.txt", r"line 3 repeats the prompt on line 1"),
        ('{"prompt": "x"}\n{"prompt": \n', "p.jsonl", r"p.jsonl:2: not valid JSON"),
        ('["x"]\n', "p.jsonl", r"p.jsonl:1: expected an object"),
        ('{"text": "x"}\n', "p.jsonl", r"p.jsonl:1: unknown field 'text'"),
        ('{"id": "x"}\n', "p.jsonl", r'p.jsonl:1: missing "prompt"'),
        ('{"prompt": ""}\n', "p.jsonl", r'p.jsonl:1: "prompt" must be a non-empty string'),
        ('{"prompt": "a", "tags": "db"}\n', "p.jsonl", r'"tags" must be a list'),
        ('{"prompt": "a", "check": {"regex": "("}}\n', "p.jsonl", r"check regex does not compile"),
        ('{"prompt": "a", "check": {"exec": "x"}}\n', "p.jsonl", r'"check" must be one of'),
        (
            '{"prompt": "a", "id": "k"}\n{"prompt": "b", "id": "k"}\n',
            "p.jsonl",
            r"line 2 reuses id 'k' from line 1",
        ),
        ("x\n", "p.csv", r"unsupported prompts file type '.csv'"),
    ],
)
def test_bad_prompt_files_are_refused_with_one_clear_line(
    prompts_file: MakeFile, content: str | bytes, name: str, message: str
) -> None:
    path = prompts_file(content, name=name)
    with pytest.raises(BadInput, match=message) as caught:
        load_prompts(path)
    assert "\n" not in str(caught.value)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file"):
        load_prompts(tmp_path / "nope.txt")


def test_demo_prompts_are_at_least_thirty_distinct() -> None:
    prompts = demo_prompts()
    assert len(prompts) >= 30
    assert len({p.text for p in prompts}) == len(prompts)
