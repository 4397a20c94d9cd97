"""`cortexd demo`: a scripted session through real proxies and one daemon, as a user would run it.

May import `client` only (it drives the daemon from outside, like a user).
"""
