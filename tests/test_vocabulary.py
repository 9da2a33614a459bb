"""The user-facing text never refers to the package's source documents as "seeds".

"Seed" is the developers' word for the papers and libraries the formulas follow; users never see
it. In the package, the docs, the README and the CLI's help the word may only mean a random seed:
every occurrence must sit near a word of random-number context (a draw, a resample, a generator,
reproducibility, …). A reference to a source document names the paper or library instead
("D. Hsu, *Balanced error rate*", "Virny").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORD = re.compile(r"\bseeds?\b", re.IGNORECASE)
RANDOM_CONTEXT = re.compile(
    r"random|resampl|rng|generator|draw|reproduc|entropy|bootstrap|interval|replicat|"
    r"seedsequence|seed=|--seed|seed_|_seed|\bint\b|integer|stream|shuffl|subset|holdout|"
    r"estimator|sampl|permut|simulat|monte carlo|same seed|seed \+|seed\)|['\"]seed['\"]|"
    r"n_resamples|\bseed\b\s*[,:=)]?\s*(int|none|\d)",
    re.IGNORECASE,
)
WINDOW = 120


def _texts() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "mkdocs.yml"]
    files += sorted((ROOT / "polars_fairmetrics").rglob("*.py"))
    files += sorted((ROOT / "polars_fairmetrics").rglob("*.html"))
    files += sorted((ROOT / "docs").rglob("*.md"))
    return [f for f in files if f.exists()]


def _offending(text: str) -> list[str]:
    out = []
    for m in WORD.finditer(text):
        window = text[max(0, m.start() - WINDOW) : m.end() + WINDOW]
        if not RANDOM_CONTEXT.search(window):
            out.append(" ".join(window.split()))
    return out


@pytest.mark.parametrize("path", _texts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_seed_only_means_a_random_seed(path: Path) -> None:
    found = _offending(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(ROOT)}: 'seed' outside a random-number context: {found}"


def test_the_check_catches_a_reference_to_a_source_document() -> None:
    assert _offending("Equals the balanced error rate (seed: importance weights).")
    assert _offending("as in the seed paper, the ratio is null")
    assert not _offending("resample_counts(counts, n_resamples=1000, seed=0)")


def test_cli_help_has_no_source_document_reference() -> None:
    from polars_fairmetrics.cli import build_parser

    for text in _help_texts(build_parser()):
        assert not _offending(text), text


def _help_texts(parser: object) -> list[str]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    texts = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            texts += [p.format_help() for p in action.choices.values()]
    return texts
