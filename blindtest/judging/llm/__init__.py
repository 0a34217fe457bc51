"""LLM judges: the judge (``judge``), its prompts (``prompts``), its batch modes (``batch``, with
the requests and the replaying judge in ``batch_requests``) and a machine judge's diagnostics
(``diagnostics``, read by the analysis)."""
