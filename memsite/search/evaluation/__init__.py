"""Retrieval quality against labelled queries: recall@k and MRR@10."""
