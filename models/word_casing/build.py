"""Builds models/word_casing/casing.tsv: how often English writes each word capitalised, from spaCy's lexeme_prob.

The source is the English `lexeme_prob` table of the PyPI package spacy-lookups-data (MIT), the table behind spaCy's
`Token.prob`: smoothed log-probabilities of case-sensitive word forms in a large web corpus. For each word it gives
P("Word") / (P("Word") + P("word")), the share of its uses written with a capital, sentence starts included. Names
score high (Priya 0.92, Oliver 0.96), common words low (Dentist 0.06, Settings 0.06, Ping 0.10), and words that are
both sit between (Mark 0.32, Grace 0.32).

    python -m venv /tmp/casing && /tmp/casing/bin/pip install spacy-lookups-data==1.0.5
    /tmp/casing/bin/python models/word_casing/build.py

or `python models/word_casing/build.py --source path/to/en_lexeme_prob.json.gz`.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE = "casing.tsv"
SOURCE_PACKAGE = "spacy-lookups-data"
SOURCE_VERSION = "1.0.5"
# A form rarer than this (≈ 1 in 66 million tokens) tells nothing reliable about how a word is written.
MIN_LOG_PROB = -18.0


def default_source() -> Path:
    import spacy_lookups_data  # only the build needs it, so it is no dependency of the project

    return Path(spacy_lookups_data.__file__).parent / "data" / "en_lexeme_prob.json.gz"


def capitalised_shares(probs: dict[str, float]) -> dict[str, float]:
    """Lower-case word -> share of its uses written Capitalised, for alphabetic words with a frequent enough form."""
    shares = {}
    for form in probs:
        word = form.lower()
        if len(word) < 2 or not word.isalpha() or word in shares:
            continue
        lower, title = probs.get(word), probs.get(word[0].upper() + word[1:])
        known = [p for p in (lower, title) if p is not None]
        if not known or max(known) < MIN_LOG_PROB:
            continue
        lower_p = math.exp(lower) if lower is not None else 0.0
        title_p = math.exp(title) if title is not None else 0.0
        shares[word] = round(title_p / (title_p + lower_p), 2)
    return shares


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="en_lexeme_prob.json.gz (default: from spacy-lookups-data)")
    args = parser.parse_args(argv)
    source = args.source or default_source()
    raw = source.read_bytes()
    probs = json.loads(gzip.decompress(raw))
    shares = capitalised_shares(probs)
    table = HERE / TABLE
    table.write_text("".join(f"{word}\t{share:.2f}\n" for word, share in sorted(shares.items())), encoding="utf-8")
    data = table.read_bytes()
    manifest = {
        "name": "word-casing",
        "source": {
            "pypi_package": SOURCE_PACKAGE,
            "pypi_version": SOURCE_VERSION,
            "pypi_package_licence": "MIT",
            "table": "spacy_lookups_data/data/en_lexeme_prob.json.gz",
            "table_sha256": hashlib.sha256(raw).hexdigest(),
        },
        "licence": "MIT",
        "files": {TABLE: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}},
        "build": {
            "command": "python models/word_casing/build.py",
            "min_log_prob": MIN_LOG_PROB,
            "words": len(shares),
            "format": "one line per lower-case word: word<TAB>share of uses written Capitalised (2 decimals)",
        },
    }
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"{len(shares)} words -> {table} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
