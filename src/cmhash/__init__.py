"""cmhash: offline ConfigMap/Secret checksum injection for Kubernetes manifests."""

__version__ = "0.2.0"  # the one place; tests check every copy against it
