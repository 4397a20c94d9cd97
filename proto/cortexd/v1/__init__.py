"""cortexd API v1: stubs generated from cortexd.proto (run `make proto` after editing it)."""
