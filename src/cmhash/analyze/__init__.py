"""The map stage: each document into small summaries of its ConfigMaps, Secrets and workloads."""
