"""Run the benchmarks: ember against torch and numpy, in one process, as ratios.

    python -m benchmarks.run                    # full run, ~1 minute on 2 cores
    python -m benchmarks.run --quick            # a rough look in a few seconds (plus imports)
    python -m benchmarks.run --busy             # with another process spinning on one core
    python -m benchmarks.run --filter x[0] --markdown

Libraries that fail to import are reported as missing; the others are still measured.
Times are medians of several measurements; ratios are time ratios (ember / other),
so below 1 means ember is faster.
"""

from __future__ import annotations

import argparse
import datetime
import faulthandler
import gc
import importlib
import json
import os
import platform
import signal
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from . import limits as machine_limits
from . import timing
from .cases import CASES, LIBRARIES, Case

RESULTS_DIR = Path(__file__).resolve().parent / "results"
RATIOS = (("ember", "torch"), ("ember", "numpy"))


# --- libraries -------------------------------------------------------------------------

@dataclass
class Library:
    name: str
    module: object | None
    version: str | None = None
    reason: str | None = None  # why it is missing
    num_threads: int | None = None


def load_library(name: str) -> Library:
    if name == "ember":
        # ember's native core is young: import it in a throwaway process first, so a
        # crash while importing it marks it missing instead of killing the run.
        try:
            timing.run_python("import ember")
        except RuntimeError as error:
            return Library(name, None, reason=str(error))
    try:
        module = importlib.import_module(name)
    except Exception as error:  # ImportError, or a broken extension module
        return Library(name, None, reason=f"import failed: {type(error).__name__}: {error}")
    if getattr(module, "__file__", None) is None:
        return Library(name, None, reason=f"{name}/ is not a package yet (no __init__.py)")
    library = Library(name, module, version=getattr(module, "__version__", None))
    get_num_threads = getattr(module, "get_num_threads", None)
    if callable(get_num_threads):
        library.num_threads = get_num_threads()
    return library


# --- running ---------------------------------------------------------------------------

@dataclass
class Result:
    status: str  # "ok", "missing" (library), "n/a" (op), "error"
    timing: timing.Timing | None = None
    note: str | None = None


def measure_library(case: Case, library: Library, settings: timing.Settings) -> Result:
    if library.module is None:
        return Result("missing", note=library.reason)
    setup = case.setup_for(library.name)
    if setup is None:
        return Result("n/a", note="no setup for this library")
    gc.collect()
    try:
        fn = setup(library.module)
        if fn is None:
            return Result("n/a", note="setup returned None")
        return Result("ok", timing.measure(fn, settings), note=case.note(library.module) if case.note else None)
    except (AttributeError, NotImplementedError) as error:
        return Result("n/a", note=f"{type(error).__name__}: {error}")
    except Exception as error:
        return Result("error", note=f"{type(error).__name__}: {error}")
    finally:
        fn = None  # free large inputs before the next library runs
        gc.collect()


def measure_case(case: Case, libraries: dict[str, Library], settings: timing.Settings):
    if not case.import_time:
        return {name: measure_library(case, libraries[name], settings) for name in LIBRARIES}
    present = [name for name in LIBRARIES if libraries[name].module is not None]
    timings, errors = timing.import_times(present, settings.repeats)
    results = {}
    for name in LIBRARIES:
        if name in timings:
            results[name] = Result("ok", timings[name])
        elif name in errors:
            results[name] = Result("error", note=errors[name])
        else:
            results[name] = Result("missing", note=libraries[name].reason)
    return results


# --- formatting ------------------------------------------------------------------------

def three_digits(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def format_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{three_digits(seconds / scale)} {unit}"
    return f"{three_digits(seconds / 1e-9)} ns"


def throughput(case: Case, seconds: float) -> float | None:
    """Work per second in units of 1e9 (GB/s or GFLOP/s), or None for timed cases."""
    work = case.bytes or case.flops
    if not work or seconds <= 0:
        return None
    return work / seconds / 1e9


def format_result(case: Case, result: Result) -> str:
    if result.status != "ok":
        return {"missing": "—"}.get(result.status, result.status)
    seconds = result.timing.median_s
    rate = throughput(case, seconds)
    if rate is None:
        return format_time(seconds)
    return f"{three_digits(rate)} {'GB/s' if case.bytes else 'GFLOP/s'}"


def ratio(results: dict[str, Result], mine: str, other: str) -> float | None:
    a, b = results[mine], results[other]
    if a.status != "ok" or b.status != "ok" or b.timing.median_s <= 0:
        return None
    return a.timing.median_s / b.timing.median_s


def format_ratio(value: float | None) -> str:
    return "—" if value is None else three_digits(value)


def limit_fraction(case: Case, results: dict[str, Result], limits) -> float | None:
    """ember's rate as a fraction of the machine's limit of its kind (benchmarks/limits.py)."""
    result = results["ember"]
    if result.status != "ok":
        return None
    return machine_limits.fraction(limits, case.bytes, case.flops, result.timing.median_s)


def format_fraction(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def table_rows(rows, limits=None) -> tuple[list[str], list[list[str]]]:
    header = ["case", *LIBRARIES, *(f"{a}/{b}" for a, b in RATIOS), "ember of limit"]
    body = [
        [
            case.name,
            *(format_result(case, results[name]) for name in LIBRARIES),
            *(format_ratio(ratio(results, a, b)) for a, b in RATIOS),
            format_fraction(limit_fraction(case, results, limits)),
        ]
        for case, results in rows
    ]
    return header, body


def text_table(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(cells):
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:]))
        return "  ".join([first, *rest]).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(header), rule, *(line(row) for row in body)])


def markdown_table(header: list[str], body: list[list[str]]) -> str:
    def line(cells):
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    align = "| " + " | ".join([":---", *("---:" for _ in header[1:])]) + " |"
    return "\n".join([line(header), align, *(line(row) for row in body)])


def describe_libraries(libraries: dict[str, Library]) -> str:
    parts = []
    for library in libraries.values():
        if library.module is None:
            parts.append(f"{library.name} unavailable")
            continue
        text = f"{library.name} {library.version or '(no version)'}"
        if library.num_threads is not None:
            text += f" ({library.num_threads} threads)"
        parts.append(text)
    return ", ".join(parts)


def describe_machine(busy: bool) -> str:
    cpus = timing.usable_cpus()
    model = timing.cpu_model()
    where = f"{cpus} CPUs" + (f" ({model})" if model else "")
    neighbour = "yes (one core kept busy by another process)" if busy else "no"
    return f"{where}, Python {platform.python_version()}, busy neighbour: {neighbour}"


def notes(rows) -> list[str]:
    lines = []
    for case, results in rows:
        for name, result in results.items():
            if result.status in ("n/a", "error") or result.note:
                lines.append(f"{case.name} / {name}: {result.status}: {result.note}")
    return lines


def describe_limits(limits) -> str:
    if limits is None:
        return "machine limits: not measured"
    bandwidth = "unknown" if limits.bandwidth_gb_s is None else f"{three_digits(limits.bandwidth_gb_s)} GB/s"
    peak = "unknown" if limits.peak_gflop_s is None else f"{three_digits(limits.peak_gflop_s)} GFLOP/s"
    return (f"machine limits (\"ember of limit\": GB/s over the copy bandwidth, GFLOP/s over the float32 peak):"
            f" memory {bandwidth}, float32 peak {peak} ({limits.how})")


def report(rows, libraries, settings, busy: bool, markdown: bool, limits=None) -> str:
    header, body = table_rows(rows, limits)
    missing = [f"{lib.name}: {lib.reason}" for lib in libraries.values() if lib.module is None]
    lines = [
        describe_machine(busy),
        describe_libraries(libraries),
        f"median of {settings.repeats} measurements of ~{settings.target_s * 1e3:.0f} ms each"
        f" (import: {settings.repeats} fresh processes, minus `python -c pass`);"
        f" the {format_time(settings.call_overhead_s)} cost of calling the timed closure is"
        " subtracted",
        "GB/s counts bytes read + written (1 GB = 1e9 B); ratios are time ratios,"
        " < 1 means ember is faster",
        describe_limits(limits),
        "",
        text_table(header, body),
    ]
    if missing:
        lines += ["", "missing libraries:", *(f"  {text}" for text in missing)]
    if notes(rows):
        lines += ["", "notes:", *(f"  {text}" for text in notes(rows))]
    if markdown:
        caption = f"{describe_machine(busy)}; {describe_libraries(libraries)}."
        lines += ["", caption, "", markdown_table(header, body)]
    return "\n".join(lines)


# --- JSON ------------------------------------------------------------------------------

def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=timing.REPO_ROOT,
            capture_output=True, text=True, check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def result_json(case: Case, result: Result, limits=None) -> dict:
    out = {"status": result.status}
    if result.note:
        out["note"] = result.note
    if result.timing is not None:
        out["median_s"] = result.timing.median_s
        out["min_s"] = min(result.timing.samples_s)
        out["samples_s"] = list(result.timing.samples_s)
        out["loops"] = result.timing.loops
        rate = throughput(case, result.timing.median_s)
        if rate is not None:
            out["gb_per_s" if case.bytes else "gflop_per_s"] = rate
            out["fraction_of_limit"] = machine_limits.fraction(limits, case.bytes, case.flops,
                                                               result.timing.median_s)
    return out


def results_json(rows, libraries, settings, busy: bool, argv: list[str], limits=None) -> dict:
    return {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": ["python", "-m", "benchmarks.run", *argv],
        "git_commit": git_commit(),
        "busy_neighbour": busy,
        "settings": {
            "target_s": settings.target_s,
            "repeats": settings.repeats,
            "call_overhead_s": settings.call_overhead_s,
        },
        "machine": {
            "cpu_count": os.cpu_count(),
            "usable_cpus": timing.usable_cpus(),
            "cpu_model": timing.cpu_model(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "python_implementation": platform.python_implementation(),
            "limits": None if limits is None else {
                "bandwidth_gb_s": limits.bandwidth_gb_s,
                "peak_float32_gflop_s": limits.peak_gflop_s,
                "threads": limits.threads,
                "how": limits.how,
            },
        },
        "libraries": {
            lib.name: {
                "available": lib.module is not None,
                "version": lib.version,
                "num_threads": lib.num_threads,
                "reason": lib.reason,
            }
            for lib in libraries.values()
        },
        "cases": [
            {
                "name": case.name,
                "bytes": case.bytes or None,
                "flops": case.flops or None,
                "results": {name: result_json(case, r, limits) for name, r in results.items()},
                "ratios": {f"{a}/{b}": ratio(results, a, b) for a, b in RATIOS},
            }
            for case, results in rows
        ],
    }


# --- CLI -------------------------------------------------------------------------------

def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--filter", action="append", metavar="SUBSTR",
                        help="run only cases whose name contains SUBSTR (case-insensitive;"
                             " repeat to select several)")
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help="where to write the results (default: benchmarks/results/"
                             "latest.json, or latest-busy.json with --busy)")
    parser.add_argument("--busy", action="store_true",
                        help="keep one core busy with a spinning process while measuring")
    parser.add_argument("--repeat", type=int, metavar="N",
                        help="measurements per case and library (default: 9, quick: 3)")
    parser.add_argument("--quick", action="store_true",
                        help="~5 ms measurements and 3 repeats: a rough look, fast")
    parser.add_argument("--markdown", action="store_true",
                        help="also print the table as markdown, for the README")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--threads", type=int, metavar="N",
                        help="threads for ember and torch (set_num_threads; default: their own,"
                             " all usable cores); numpy's BLAS keeps its own")
    parser.add_argument("--no-limits", action="store_true",
                        help="skip measuring the machine's bandwidth and peak (~2 s)")
    args = parser.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")
    return args


def select(cases: list[Case], filters: list[str] | None) -> list[Case]:
    if not filters:
        return cases
    wanted = [f.lower() for f in filters]
    return [case for case in cases if any(f in case.name.lower() for f in wanted)]


def progress(text: str, end: str = "\n") -> None:
    print(text, end=end, file=sys.stderr, flush=True)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    cases = select(CASES, args.filter)
    if args.list or not cases:
        if not cases:
            progress(f"no case matches {args.filter}; the cases are:")
        print("\n".join(case.name for case in CASES))
        return 0 if cases else 2

    settings = timing.QUICK if args.quick else timing.FULL
    if args.repeat is not None:
        settings = replace(settings, repeats=args.repeat)
    libraries = {name: load_library(name) for name in LIBRARIES}
    if args.threads is not None:
        for lib in libraries.values():
            if lib.num_threads is not None:  # ember and torch
                lib.module.set_num_threads(args.threads)
                lib.num_threads = lib.module.get_num_threads()
    progress(describe_libraries(libraries))
    limits = None
    if not args.no_limits and any(case.bytes or case.flops for case in cases):
        # measured before the busy neighbour starts: the hardware's limits, not what is left
        threads = libraries["ember"].num_threads or timing.usable_cpus()
        limits = machine_limits.measure({name: lib.module for name, lib in libraries.items()
                                         if name != "ember" and lib.module is not None}, threads)
        progress(describe_limits(limits))

    rows = []
    with timing.busy_neighbour(args.busy):
        settings = replace(settings, call_overhead_s=timing.call_overhead(settings))
        for index, case in enumerate(cases, 1):
            progress(f"[{index}/{len(cases)}] {case.name} ...", end=" ")
            results = measure_case(case, libraries, settings)
            progress("  ".join(f"{name} {format_result(case, r)}" for name, r in results.items()))
            rows.append((case, results))

    print(report(rows, libraries, settings, args.busy, args.markdown, limits))
    path = args.json or RESULTS_DIR / ("latest-busy.json" if args.busy else "latest.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results_json(rows, libraries, settings, args.busy, argv, limits),
                               indent=2, ensure_ascii=False) + "\n")
    progress(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    faulthandler.enable()  # a crash in a native core still names the case it was in
    # SIGTERM unwinds like Ctrl-C, so the busy neighbour is always stopped.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        return run(args, argv)
    except KeyboardInterrupt:
        progress("\ninterrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
