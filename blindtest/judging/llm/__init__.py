"""LLM judges: the judge (``judge``), its prompts (``prompts``), its batch modes (``batch``, with
the requests and the replaying judge in ``batch_requests``), and, read by the analysis, a
machine judge's diagnostics (``diagnostics``) and how it fares on the hidden controls and
against a person (``calibration``)."""
