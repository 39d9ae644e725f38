"""``memsite init --<cli>``: each agent CLI's project configuration of memsite's hooks, one
module per CLI, written or merged as ``init --claude`` does (``agents/settings.py``)."""
