"""Everything about judging: the ``Judge`` protocol and the driver (``driver``), one sitting
(``sitting``), the picks contract (``picks``), the tell bots (``bots``), people in a terminal
(``terminal``), people on the judging page and panels (``web``) and LLM judges (``llm``).

The judge stage of the layering, except ``picks``, ``bots`` and ``llm.diagnostics``, which the
audit and the analysis read too (they import no part of the judge stage)."""
