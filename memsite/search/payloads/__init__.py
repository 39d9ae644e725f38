"""What an agent is handed: recall, prime and why, cut to a token budget."""
