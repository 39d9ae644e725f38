"""Protocols that hand memory to agents (issue 10: the MCP server). Each is a thin adapter
over ``memsite.Memory``, like ``site/plugin.py`` is for MkDocs; only ``cli`` imports them."""
