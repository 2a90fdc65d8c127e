"""cmhash: offline ConfigMap/Secret checksum injection for Kubernetes manifests."""

__version__ = "0.1.0"
