"""Commands that publish memory: build and serve the site (issue 4)."""

from __future__ import annotations
