"""The ``memsite`` command line, a thin layer over :class:`memsite.Memory`.

``app`` holds the group and what commands share; each other module is one group of commands
that registers itself on the group when imported, and the group imports it only when one of
its commands is asked for (``app.COMMANDS``): ``memsite log`` loads no module of the readers'
commands. Heavy modules (the index, the site) are imported inside the commands that need
them, so the write commands stay fast.
"""

from .app import cli, main

__all__ = ["cli", "main"]
