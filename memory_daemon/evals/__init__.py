"""`cortexd eval`: quality measured on labelled data (activation components, retrieval signals, search over every
kind, and the external LoCoMo benchmark beside baselines). Nothing imports `evals` but the CLI.
"""
