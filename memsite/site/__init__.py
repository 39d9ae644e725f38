"""The memory site: pages built as data, charts, templates, and the MkDocs plugin."""
