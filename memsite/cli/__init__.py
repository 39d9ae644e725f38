"""The ``memsite`` command line, a thin layer over :class:`memsite.Memory`.

``app`` holds the group and what commands share; each other module is one group of commands
that registers itself on the group when imported. Heavy modules (the index, the site) are
imported inside the commands that need them, so the write commands stay fast.
"""

from . import agents, recall, setup, site, window, writing  # noqa: F401  (the commands register themselves)
from .app import cli, main

__all__ = ["cli", "main"]
