"""The live session and its history: the hot context, starting and ending a session,
checkpoints and their summaries."""
