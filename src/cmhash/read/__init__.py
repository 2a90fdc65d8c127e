"""Reading: which inputs, their text, its documents, and which documents need a parser."""
