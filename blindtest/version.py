"""The version of this blindtest (the package reads it from here, and so does the wheel's
metadata): a module of its own, so that a module below the package's face names it without
importing the face."""

__version__ = "0.1.0"
