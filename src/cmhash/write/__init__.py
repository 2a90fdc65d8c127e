"""Writing: the edit spliced, checked, and delivered as a stream, a diff or files."""
