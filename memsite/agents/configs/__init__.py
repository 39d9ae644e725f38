"""The project configuration each agent CLI other than Claude Code reads its hooks from,
written or merged by ``memsite init --<cli>`` (issue 37), one module per CLI. Claude Code's
is ``agents/settings.py``, whose merge they share."""
