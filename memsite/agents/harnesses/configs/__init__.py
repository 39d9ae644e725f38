"""Each agent CLI's project configuration as ``memsite init --<cli>`` writes it (issue 37):
one module per CLI, each its events, matchers, timeout units and the file they go in, merged
by ``agents/settings.py`` as ``--claude``'s are."""
