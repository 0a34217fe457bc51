"""What uses every stage, above them: ``blindtest run`` (:mod:`~blindtest.pipeline.run`, the
stage functions in order under one lock), where a run stands between stages
(:mod:`~blindtest.pipeline.chain`), and bt-verify (:mod:`~blindtest.pipeline.verify`, with
:mod:`~blindtest.pipeline.recompute`, which recomputes what every stage wrote).

The stages themselves are one package each (``blindtest.designing``, ``generation``,
``judging``, ``auditing``, ``analysis``, ``planning``), each with its ``stage.py``; no stage
imports another.
"""
