"""Two versions of laminate compared by the instructions they execute, not by time.

Usage: ``python benchmarks/bench_instructions.py --base OTHER/src [--provider P]
[--streams text tools] [--backend orjson|stdlib]`` (``--help`` for every option)

On a machine whose neighbours come and go, two timings of the same code can differ by
a tenth, which hides a change of a few percent. Valgrind's callgrind counts the
instructions a process executes, which move by a few tenths of a percent from run to
run (the same code against itself reads 0.998 to 1.002): this script feeds each
benchmark stream (``_streams.py``, in 16 KiB reads, every event consumed) to a
``StreamNormalizer`` of the working tree and of ``--base`` (the ``src`` folder of
another checkout, say ``git worktree add /tmp/base <commit>``), each in a process of its
own under callgrind, and prints the instructions per stream and their ratio, new over
base. Each count is a process that reads the stream twice less one that reads it once,
so that start-up and imports cancel out. What the imports left is collected and then
frozen (``gc.freeze``) before the first read: else a collection of it falls inside a read
or not as the two checkouts' imports happen to allocate (the OpenAI text stream read 1.13,
none of the code it runs changed). ``PYTHONHASHSEED`` is fixed, so that dict layouts do not
vary, and ``LAMINATE_CRC`` is ``zlib`` unless set (the CRC-32 the event stream decoder
would pick by timing at import is not always the same in the two processes of a count
under callgrind: 222 and 240 million instructions for Bedrock's tool stream in two runs
of the same code, 234 million with zlib's in both). Instructions are not time (a cache
miss costs more than an addition): read them beside ``bench_core.py``'s ratios, not
instead of them.

Needs ``valgrind`` (Debian's package of that name); the streams are written to a
temporary folder first, so that generating them is not counted.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _streams import text_stream, tools_stream

PROVIDERS = ("openai", "anthropic", "ollama", "openai-responses", "gemini", "cohere", "bedrock")
HERE_SRC = Path(__file__).resolve().parent.parent / "src"

# What each counted process runs: the stream read ``reads`` times by a new normalizer.
_WORKLOAD = """
import gc
import sys
from laminate import StreamNormalizer
from laminate._core import jsonlib
body_path, provider, backend, reads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
jsonlib.use(backend)
body = open(body_path, "rb").read()
chunks = [body[i : i + 16384] for i in range(0, len(body), 16384)]
gc.collect()
gc.freeze()
for _ in range(reads):
    normalizer = StreamNormalizer(provider=provider)
    for chunk in chunks:
        for _ in normalizer.feed(chunk):
            pass
    for _ in normalizer.close():
        pass
"""


def instructions(src: Path, body: Path, provider: str, backend: str, reads: int) -> int:
    """The instructions one process executes reading ``body`` ``reads`` times."""
    # The decoder picks its CRC-32 by timing the two at import, which under callgrind
    # need not pick the same one from process to process: zlib's for both checkouts,
    # unless LAMINATE_CRC names one.
    crc = os.environ.get("LAMINATE_CRC", "zlib")
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0", "LAMINATE_CRC": crc}
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    command += [sys.executable, "-c", _WORKLOAD, str(body), provider, backend, str(reads)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="another checkout's src")
    parser.add_argument("--new", type=Path, default=HERE_SRC, help="default: this checkout's")
    parser.add_argument("--provider", action="append", choices=PROVIDERS)
    kinds = ("text", "tools")
    parser.add_argument("--streams", nargs="+", choices=kinds, default=list(kinds))
    parser.add_argument("--backend", choices=("orjson", "stdlib"), default="orjson")
    parser.add_argument("--text-bytes", type=int, default=300_000)
    parser.add_argument("--args-chars", type=int, default=60_000)
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    for src in (args.base, args.new):
        if not (src / "laminate" / "__init__.py").is_file():
            sys.exit(f"{src} holds no laminate package")
    print(f"base {args.base}, new {args.new}, {args.backend}; instructions per read")
    print("| stream | base | new | new / base |")
    print("|---|--:|--:|--:|")
    workers = os.cpu_count() or 2
    with (
        tempfile.TemporaryDirectory(prefix="laminate-instructions-") as folder,
        ThreadPoolExecutor(workers) as pool,
    ):
        for provider in args.provider or PROVIDERS:
            for kind in args.streams:
                if kind == "text":
                    stream = text_stream(provider, args.text_bytes)
                else:
                    stream = tools_stream(provider, args.args_chars)
                body = Path(folder) / f"{provider}-{kind}.bin"
                body.write_bytes(stream.body)
                # One read's instructions: two reads less one, so that start-up cancels.
                counts = {
                    (src, reads): pool.submit(
                        instructions, src, body, provider, args.backend, reads
                    )
                    for src in (args.base, args.new)
                    for reads in (1, 2)
                }
                base, new = (
                    counts[src, 2].result() - counts[src, 1].result()
                    for src in (args.base, args.new)
                )
                ratio = new / base
                print(f"| {stream.name} | {base:,} | {new:,} | {ratio:.3f} |", flush=True)


if __name__ == "__main__":
    main()
