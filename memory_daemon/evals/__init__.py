"""`cortexd eval`: quality measured on labelled data (activation components, retrieval signals, search over every
kind). Nothing imports `evals` but the CLI.
"""
