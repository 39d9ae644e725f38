"""``memsite init --<cli>``: each agent CLI's project configuration of memsite's hooks (issue
37), one module per CLI, merged with ``agents/settings.py``'s helpers (Claude Code's)."""
