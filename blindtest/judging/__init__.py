"""Judges beyond the terminal: the judging page (``blindtest.judging.web``), on the judge
side of the stage layering (it may import ``blindtest.judgment`` and ``blindtest.judges``)."""
