"""The cortexd memory daemon: owns the store and the models, serves gRPC to proxies, scripts and the CLI."""

__version__ = "0.1.0"
