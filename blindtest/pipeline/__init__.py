"""Above the stages: what uses several of them.

``run`` chains the stage functions for ``blindtest run`` (and the demos), ``chain`` says where
a run stands between stages, ``recompute`` is the verifier (it recomputes every stage's files
from the raw materials) and ``verify`` its stage function. Each stage's own function (lock,
claim the outputs, write the files, return a frozen result) lives in its package
(``blindtest.designing.stage``, ``generation.stage``, ``judging.stage``, ``auditing.stage``,
``analysis.stage``, ``planning.stage``); ``blindtest.design`` and the rest hand them out.
"""
