"""The live session and its history: the hot context, starting and ending a session,
checkpoints and their summaries.

Two defaults of a checkpoint live here, where ``Memory.checkpoint`` reads them without
loading the checkpoints and their summarizer on every write (issue 35)."""

THRESHOLD = 0.8  # the share of the window past which a checkpoint is due
SUMMARIZER_TIMEOUT = 60.0  # seconds a summarizer command may take
