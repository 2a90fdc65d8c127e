"""Parsing: YAML text into a position-carrying tree, within bounds, read as Kubernetes reads it."""
