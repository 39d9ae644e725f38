"""The Whoosh index of chunks, the only package that imports Whoosh: keeping it fresh,
its state, documents, postings and codec, query-time search and related entries."""
