"""Every benchmark script, in its smoke mode: still runs, still counts right (CI, ``.ci/run``).

    uv run --group bench python bench/smoke.py [--only pings dispatch ...] [--timeout 900]

Each script of ``bench/`` that can be run (``if __name__ == "__main__"``) is run with
``--smoke``, one after the other: small sizes, a few seconds, on a database of its own (a
scratch database on the server of ``DATABASE_URL``, an embedded server without it;
``bench/outage.py`` a cluster of its own; ``bench/screenshots.py`` needs Debian's chromium,
``bench/compare.py`` the ``bench`` dependency group). A script fails when it exits non-zero:
it crashed, or one of its count checks did not match (every ping answered recorded, every slot
delivered once, every seeded row found; each script's docstring says which). No timing is
asserted. The table at the end gives each script's exit status and duration; the output of a
failed one is printed. Exit status 1 when any failed, or when a script named by ``--only``
does not exist.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
NOT_SCRIPTS = {"__init__", "common", "smoke"}


def scripts() -> list[str]:
    """The runnable scripts of ``bench/`` (their names, without ``.py``), sorted."""
    return sorted(p.stem for p in BENCH.glob("*.py")
                  if p.stem not in NOT_SCRIPTS and '__name__ == "__main__"' in p.read_text())


def run(name: str, timeout: float) -> tuple[int, float, str]:
    """``(exit status, seconds, output)`` of ``bench/<name>.py --smoke`` (124 on timeout)."""
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, str(BENCH / f"{name}.py"), "--smoke"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
        code, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        code = 124
        output = (out.decode(errors="replace") if isinstance(out, bytes) else out) + \
            f"\n(timed out after {timeout:.0f} s)"
    return code, time.monotonic() - started, output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these scripts only")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per script")
    args = parser.parse_args()
    names = scripts()
    if args.only:
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            print(f"no such benchmark script: {', '.join(unknown)} (have: {', '.join(names)})",
                  file=sys.stderr)
            return 1
        names = [n for n in names if n in args.only]
    results = []
    for name in names:
        print(f"bench/{name}.py --smoke …", flush=True)
        code, seconds, output = run(name, args.timeout)
        results.append((name, code, seconds))
        if code:
            print(f"--- bench/{name}.py --smoke failed (exit {code}); its output:\n"
                  f"{output[-6000:]}\n---", flush=True)
    print("\n| script | exit | seconds |\n|---|---:|---:|")
    for name, code, seconds in results:
        print(f"| bench/{name}.py --smoke | {code} | {seconds:.0f} |")
    failed = [name for name, code, _ in results if code]
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
