"""The cortexd API package: generated gRPC stubs and the connection conventions every client shares."""
