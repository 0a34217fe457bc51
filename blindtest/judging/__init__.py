"""The judging stage (``stage``: :func:`~blindtest.judging.stage.judge`, a panel, a picks file
checked): the ``Judge`` protocol and the driver (``driver``), the recorder the driver writes
through (``recorder``), one sitting (``sitting``), what happens to an existing picks file
(``output``), and one module or package per kind: people in a terminal (``terminal``), people
on the judging page and panels (``web``), bots (``bot_judge``), LLM judges (``llm``), another
run's picks copied (``replay``), a blind panel's verdicts imported (``verdicts``).

What the audit and the analysis read too sits below the stages, in :mod:`blindtest.model`:
the registry of judge kinds (``judge_kinds``), the picks contract (``picks``), the tell bots
(``bots``)."""
