"""What the integrations need: KRM functions, GitLab notes, plugin installers."""
