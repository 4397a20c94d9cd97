"""`cortexd bench`: speed and memory measured side by side in one run, printed as tables. `runner` picks a suite;
`common` holds the helpers every suite shares, so no suite imports another.

May import anything below `api`, and drives the daemon from outside through `client`; nothing imports `bench` but
the CLI.
"""
