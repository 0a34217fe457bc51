"""blindtest: can anyone actually tell these two language models apart, on my prompts?"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
