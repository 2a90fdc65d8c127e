"""The reduce stage: the config index, each workload's value, edit and findings."""
