"""Coverage-guided fuzzing of ``StreamNormalizer.feed`` / ``close`` with atheris.

Each input is one stream's bytes. It is checked by :func:`fuzz.targets.check_stream`
for every provider setting (detected, and each provider forced), fed whole and cut
every ``1 + len % 61`` bytes. laminate is instrumented, so libFuzzer steers its
mutations towards new branches. The repository's fixtures seed the run and
``fuzz/laminate.dict`` gives it the formats' tokens.

Needs ``pip install atheris`` (``pip install -e .[fuzz]``). From the repository root::

    python fuzz/fuzz_feed.py -max_total_time=60          # a minute
    python fuzz/fuzz_feed.py -max_total_time=3600 -jobs=2 -workers=2
    python fuzz/fuzz_feed.py crash-<hash>                 # replay one input

Any libFuzzer flag works. A failing input is saved as ``crash-<hash>`` in the current
directory; pass a directory to keep the growing corpus between runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import atheris  # type: ignore[import-not-found, import-untyped, unused-ignore]

with atheris.instrument_imports(include=["laminate"]):
    import laminate  # noqa: F401  (instrumented before fuzz.targets imports it)

# After the instrumented import, on purpose.
from fuzz.targets import FIXTURES, PROVIDERS, check_stream

HERE = Path(__file__).resolve().parent


def test_one_input(data: bytes) -> None:
    step = 1 + len(data) % 61
    cuts = range(step, len(data), step)
    for provider in PROVIDERS:
        check_stream(data, provider, cuts)


def _default_flags(argv: list[str]) -> list[str]:
    """Seed with the fixtures and use the token dictionary unless told otherwise."""
    flags = list(argv)
    replaying = any(Path(arg).is_file() for arg in argv[1:] if not arg.startswith("-"))
    if replaying:
        return flags
    if not any(arg.startswith("-seed_inputs=") for arg in argv):
        seeds = sorted(FIXTURES.rglob("*.sse")) + sorted(FIXTURES.rglob("*.ndjson"))
        flags.append("-seed_inputs=" + ",".join(str(path) for path in seeds))
    if not any(arg.startswith("-dict=") for arg in argv):
        flags.append(f"-dict={HERE / 'laminate.dict'}")
    return flags


def main() -> None:
    import logging

    # laminate logs what it tolerates (a repeated stop reason, a changed tool id): noise here.
    logging.getLogger("laminate").setLevel(logging.ERROR)
    atheris.Setup(_default_flags(sys.argv), test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
