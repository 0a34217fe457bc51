"""Everything about judging: the registry of judge kinds (``kinds``), the ``Judge`` protocol
and the driver (``driver``), the recorder the driver writes through (``recorder``), one sitting
(``sitting``), the picks contract (``picks``), the tell bots (``bots``) and one module or
package per kind: people in a terminal (``terminal``), people on the judging page and panels
(``web``), bots (``bot_judge``), LLM judges (``llm``), another run's picks copied (``replay``).

The judge stage of the layering, except ``kinds``, ``picks``, ``bots``, ``llm.diagnostics`` and
``llm.calibration``, which the audit and the analysis read too (they import no part of the
judge stage)."""
