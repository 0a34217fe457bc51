"""The LLM judge's warnings name the sides it shares a family or an endpoint with: as two
sides have always been said ("side A (m) and B (n)", byte for byte, since report.json stores
the line), and several candidates as one list ("the sides a (m), b (n) and c (o)")."""

from __future__ import annotations

from blindtest.analysis.llm_diagnostics import _warnings

URL = "http://127.0.0.1:8767/v1"


def _sides(**models: str) -> dict[str, dict[str, str]]:
    return {name.replace("_", "-"): {"model": m, "base_url": URL} for name, m in models.items()}


def test_two_sides_keep_their_wording() -> None:
    both = _warnings([], "sim-judge-fair", URL, _sides(A="sim-large", B="sim-small"))
    assert both == [
        "the judge model sim-judge-fair is of the same family (sim) as side A (sim-large) and "
        "B (sim-small): a judge may favour its own family",
        "the judge is served by the same endpoint (http://127.0.0.1:8767) as side A and B",
    ]
    one = _warnings([], "sim-judge-fair", None, {"A": {"model": "sim-large"}, "B": {"model": "x"}})
    assert one == [
        "the judge model sim-judge-fair is of the same family (sim) as side A (sim-large): a "
        "judge may favour its own family"
    ]


def test_several_candidates_are_listed_as_the_sides() -> None:
    sides = _sides(
        large="sim-large", large_brief="sim-large", small="sim-small", small_detailed="sim-small"
    )
    family, endpoint = _warnings([], "sim-judge-fair", URL, sides)
    assert family == (
        "the judge model sim-judge-fair is of the same family (sim) as the sides large "
        "(sim-large), large-brief (sim-large), small (sim-small) and small-detailed "
        "(sim-small): a judge may favour its own family"
    )
    assert endpoint == (
        "the judge is served by the same endpoint (http://127.0.0.1:8767) as the sides large, "
        "large-brief, small and small-detailed"
    )
    pair = _warnings([], "sim-judge-fair", None, _sides(alpha="sim-large", beta="sim-small"))
    assert "as the sides alpha (sim-large) and beta (sim-small):" in pair[0]
    alone = _warnings([], "sim-judge-fair", None, _sides(alpha="sim-large", beta="gpt-4o"))
    assert "as side alpha (sim-large):" in alone[0]
