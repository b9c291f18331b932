"""SentryWard 0.1.1 and `xdsl-tmem-run` side by side on the same PTX files.

Subjects: every client kernel (`tests/clients/**/*.ptx`, launched as its sidecar says), every
seeded-bug variant of the client GEMMs (`tests/clients/seeded.py`), and our backend's PTX of the
shipped examples and the reference pipeline (`xdsl-tmem-opt ... -p lower-tmem -t ptx`, launched
as `tests/support.py`'s `CLEAN` runs them). Our side runs a client through
`tests/clients/sidecar.py`'s `run_client`, the launch the tests use (tensor maps, dynamic shared
memory, `FENCE_POLICY`), in a child of this script (`--run-client`); our examples through
`xdsl-tmem-run`. For each, both tools run as child processes; the
table gives each one's verdict, wall time and peak memory (the child's maximum resident set from
`os.wait4`, which covers the grandchildren it waited for: sentryward's native verifier).

    python benchmarks/compare_sentryward.py [--only SUBSTRING] [--timeout S] [--json FILE]

SentryWard is found through `$XDSL_TMEM_SENTRYWARD` (its Python, run as `python -m sentryward`,
or its `sentryward` executable), else `sentryward` on PATH; without it the sentryward columns
say "missing". It needs a launch description (`--input`, schema `spverify.kernel-input/v1`),
built here from the same sidecar: launch dimensions, scalar parameter values, and for each
`CUtensorMap` parameter its encoding (field names as sentryward's input validator accepts them,
read from its error messages; see docs/comparison.md). Pointers are left symbolic: sentryward
rejects numeric pointer values ("pointer inputs use symbolic objects").

Outside CI: it takes minutes (sentryward spends 5-40 s on each GEMM it analyses).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from clients.seeded import EXPECTED, MUTATIONS, variants  # noqa: E402
from clients.sidecar import FENCE_POLICY, entry_signatures, make_tensors, run_client  # noqa: E402

CLIENTS = ROOT / "tests" / "clients"
EXIT_DEADLOCK, EXIT_HAZARD, EXIT_LIMIT = 2, 3, 4  # xdsl_tmem/tools/run.py
SCALAR_TYPES = {".u32": "u32", ".s32": "s32", ".u64": "u64", ".s64": "s64", ".b32": "u32", ".b64": "u64"}


@dataclass
class Subject:
    """One PTX file with its launch, for both tools."""

    name: str
    variant: str
    ptx: str
    kernel: str
    grid: list[int]
    block: list[int]
    cluster: list[int]
    dynamic_shared_bytes: int
    scalars: dict[str, tuple[str, int]] = field(default_factory=lambda: {})
    """PTX parameter name → (sentryward scalar type, value)."""
    tensormaps: list[dict[str, Any]] = field(default_factory=lambda: [])
    run_args: list[str] = field(default_factory=lambda: [])
    """`xdsl-tmem-run` arguments after the file (our examples)."""
    client: str = ""
    """The client kernel whose sidecar launches it (`triton/gemm_dot`); empty for our examples."""
    expected: str = ""


@dataclass
class Outcome:
    verdict: str
    seconds: float
    peak_mib: float


def client_subject(name: str, ptx: str, variant: str = "original") -> Subject:
    """A client kernel (or a seeded variant of it) launched as its sidecar says. Our side runs it
    through `sidecar.run_client`, the launch `tests/test_clients.py` runs (tensor maps, dynamic
    shared memory, `sidecar.FENCE_POLICY`), in a child process (`--run-client`); sentryward gets
    the same launch dimensions, scalars and tensor-map encodings."""
    sidecar = json.loads((CLIENTS / f"{name}.json").read_text())
    subject = Subject(
        name, variant, ptx, sidecar["kernel"], sidecar["grid"], sidecar["block"], sidecar["cluster"],
        sidecar["dynamic_shared_bytes"],
    )  # fmt: skip
    subject.client = name
    for param in sidecar["params"]:
        if param["kind"] == "scalar":
            subject.scalars[param["name"]] = (SCALAR_TYPES[param["ptx_type"]], param["value"])
        elif param["kind"] == "tensormap":
            tm = param["tensormap"]
            subject.tensormaps.append(
                {
                    "parameter": param["name"], "object": tm["tensor"], "element_type": tm["element_type"],
                    "rank": tm["rank"], "global_shape": tm["global_dims"],
                    "global_strides_bytes": tm["global_strides_bytes"], "box_shape": tm["box_dims"],
                    "element_strides": tm["element_strides"], "interleave": tm["interleave"],
                    "swizzle": tm["swizzle"], "oob_fill": "zero",
                }
            )  # fmt: skip
    return subject


def own_subjects(workdir: Path) -> list[Subject]:
    """Our backend's PTX of every example and the reference pipeline, launched as `CLEAN` says."""
    from support import CLEAN

    subjects: list[Subject] = []
    for source, launch in CLEAN:
        ptx = workdir / f"{source.stem}.ptx"
        opt = [sys.executable, "-m", "xdsl_tmem.tools.opt", str(source), "-p", "lower-tmem", "-t", "ptx"]
        ptx.write_text(subprocess.run(opt, check=True, capture_output=True, text=True, cwd=ROOT).stdout)
        words = shlex.split(launch)
        kernel = words[words.index("--kernel") + 1]
        block = [int(words[words.index("--block") + 1]), 1, 1]
        entry = entry_signatures(ptx.read_text())[kernel]
        cluster = [*entry.directives.get(".reqnctapercluster", [1]), 1, 1][:3]
        subject = Subject(f"ours/{source.stem}", "original", str(ptx), kernel, cluster, block, cluster, 0)
        args = ["--kernel", kernel, "--block", str(block[0])]
        named = [w.partition("=") for w in words[1::2] if "=" in w]
        for i, (name, _, value) in enumerate(named):
            param = entry.params[i]
            if value.lstrip("-").isdigit():
                args += ["--arg", f"arg{i}={value}"]
                subject.scalars[param.name] = (SCALAR_TYPES[param.ptx_type], int(value))
            else:
                args += ["--arg", f"{name}={value}", "--arg", f"arg{i}=ptr:{name}"]
        subject.run_args = args
        subject.expected = "SAFE"
        subjects.append(subject)
    return subjects


def sentryward_command() -> list[str] | None:
    configured = os.environ.get("XDSL_TMEM_SENTRYWARD")
    if configured:
        path = Path(configured)
        return [configured, "-m", "sentryward"] if "python" in path.name else [configured]
    found = shutil.which("sentryward")
    return [found] if found else None


def _measure(command: list[str], timeout: float) -> tuple[int, str, str, float, float]:
    """Run; return code, stdout, stderr, wall seconds, peak RSS (MiB) of it and its waited descendants."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT)
        deadline = start + timeout
        status, usage = 0, None
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                _, status, usage = os.wait4(process.pid, 0)
                status = -9
                break
            time.sleep(0.05)
        seconds = time.monotonic() - start
        process.returncode = 0  # reaped above
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status) if status != -9 else -9
        return (
            code,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            seconds,
            usage.ru_maxrss / 1024,
        )


def run_sentryward(command: list[str] | None, subject: Subject, workdir: Path, timeout: float) -> Outcome:
    if command is None:
        return Outcome("missing (set $XDSL_TMEM_SENTRYWARD)", 0.0, 0.0)
    config: dict[str, Any] = {
        "schema": "spverify.kernel-input/v1",
        "launch": {
            "grid_dim": subject.grid, "block_dim": subject.block, "cluster_dim": subject.cluster,
            "dynamic_shared_bytes": subject.dynamic_shared_bytes,
        },
        "arguments": [{"parameter": p, "type": t, "value": v} for p, (t, v) in subject.scalars.items()],
    }  # fmt: skip
    if subject.tensormaps:
        config["tma_descriptors"] = subject.tensormaps
    path = workdir / f"{subject.name.replace('/', '_')}-{subject.variant}.input.json"
    path.write_text(json.dumps(config, indent=1))
    code, out, err, seconds, peak = _measure(
        [*command, subject.ptx, "--input", str(path), "--timeout", str(timeout)], timeout + 30
    )
    try:
        result: dict[str, Any] = json.loads(out)
    except ValueError:
        return Outcome(f"no report (exit {code}): {err.strip().splitlines()[-1:] or ''}", seconds, peak)
    verdict = str(result.get("result"))
    diagnostics: list[dict[str, Any]] = result.get("diagnostics") or []
    if diagnostics and verdict not in ("race_free", "verified"):
        # every distinct diagnostic code, with the PTX line of its first occurrence
        codes: dict[str, Any] = {}
        for diagnostic in diagnostics:
            details: dict[str, Any] = diagnostic.get("details") or {}
            location: dict[str, Any] = details.get("location") or {}
            codes.setdefault(str(diagnostic.get("code")), details.get("ptx_line") or location.get("line"))
        verdict += ": " + ", ".join(f"{c} (line {line})" if line else c for c, line in codes.items())
    return Outcome(verdict, seconds, peak)


def _result_error(sidecar: dict[str, Any], outputs: dict[str, Any]) -> str:
    """`, max error E` against the sidecar's numpy expressions (`, WRONG: ...` above a tolerance)."""
    import numpy as np

    inputs = make_tensors(sidecar["tensors"])
    worst, wrong = 0.0, ""
    for name, expression in sidecar["expected"].items():
        want = np.asarray(eval(expression, {"np": np}, dict(inputs)), dtype=np.float64)
        error = float(np.max(np.abs(np.asarray(outputs[name], dtype=np.float64) - want)))
        worst = max(worst, error)
        if error > sidecar["tolerance"][name]:
            wrong += f", WRONG: {name} off by {error:g} (tolerance {sidecar['tolerance'][name]:g})"
    return wrong or f", max error {worst:g}"


def run_client_verdict(name: str, ptx: str) -> str:
    """The child's side of `--run-client`: run `ptx` with client `name`'s launch; the verdict."""
    from xdsl_tmem.diagnostics import SourceMap
    from xdsl_tmem.interpreter import KernelDeadlock, KernelHazard, KernelStepLimit

    source_map = SourceMap()

    def line(op: Any) -> str:
        span = source_map.span_of(op) if op is not None else None
        return f" (line {span.get_location().line})" if span is not None else ""

    text = Path(ptx).read_text()
    try:
        result = run_client(CLIENTS / f"{name}.ptx", text, source_map, fence_policy=FENCE_POLICY)
    except KernelHazard as e:
        return f"hazard {e.kind}{line(e.op)}"
    except KernelDeadlock as e:
        return "deadlock" + (f" ({e.cause[0]})" if e.cause else "")
    except KernelStepLimit:
        return "step limit"
    except Exception as e:  # any other refusal, reported in words
        return f"refused: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    sidecar = json.loads((CLIENTS / f"{name}.json").read_text())
    races = result.report.same_value_races
    noted = f" ({races} same-value write-write race{'s' if races > 1 else ''} noted)" if races else ""
    return "SAFE" + noted + _result_error(sidecar, result.outputs)


def run_ours(subject: Subject, timeout: float) -> Outcome:
    if subject.client:
        command = [sys.executable, __file__, "--run-client", subject.client, subject.ptx]
        code, out, err, seconds, peak = _measure(command, timeout)
        if code == -9:
            return Outcome(f"timeout ({timeout:.0f} s)", seconds, peak)
        lines = out.strip().splitlines()
        verdict = lines[-1] if code == 0 and lines else f"no verdict (exit {code}): {err.strip()[-200:]}"
        return Outcome(verdict, seconds, peak)
    command = [sys.executable, "-m", "xdsl_tmem.tools.run", subject.ptx, *subject.run_args]
    code, _, err, seconds, peak = _measure(command, timeout)
    if code == 0:
        verdict = "SAFE"
    elif code == -9:
        verdict = f"timeout ({timeout:.0f} s)"
    elif code == EXIT_HAZARD:
        verdict = "hazard " + err.partition("hazard ")[2].partition(":")[0]
    elif code == EXIT_DEADLOCK:
        cause = err.partition("cause: hazard ")[2].partition(":")[0]
        verdict = "deadlock" + (f" ({cause})" if cause else "")
    elif code == EXIT_LIMIT:
        verdict = "step limit"
    else:
        first = next((line for line in err.splitlines() if "error:" in line), err.strip()[:200])
        verdict = "refused: " + first.partition("error: ")[2]
    return Outcome(verdict, seconds, peak)


def subjects(workdir: Path) -> list[Subject]:
    found = [  # (not the 1024^3 builds: the same kernels at benchmarks/client_gemms.py's shape)
        client_subject(str(p.relative_to(CLIENTS).with_suffix("")), str(p))
        for p in sorted(CLIENTS.glob("*/*.ptx"))
        if not p.stem.endswith("_1024")
    ]
    for kernel, mutation in variants():
        ptx = workdir / f"{kernel.replace('/', '_')}-{mutation}.ptx"
        ptx.write_text(MUTATIONS[mutation]((CLIENTS / f"{kernel}.ptx").read_text()))
        subject = client_subject(kernel, str(ptx), mutation)
        classes = EXPECTED[kernel, mutation].classes
        subject.expected = " / ".join(classes) if classes else "SAFE (not a bug here)"
        found.append(subject)
    return [*found, *own_subjects(workdir)]


def _cell(outcome: Outcome) -> str:
    return f"{outcome.verdict} | {outcome.seconds:.1f} | {outcome.peak_mib:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="SentryWard and xdsl-tmem-run side by side on the same PTX files.")
    parser.add_argument("--only", default="", help="run the subjects whose name or variant contains this")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per tool and subject")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--run-client", nargs=2, metavar=("CLIENT", "PTX"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_client:  # the child `run_ours` measures
        print(run_client_verdict(*args.run_client))
        return 0
    command = sentryward_command()
    if command is None:
        print("sentryward: missing (set $XDSL_TMEM_SENTRYWARD to its python or executable)", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    print("| kernel | variant | expected | sentryward | s | MiB | xdsl-tmem | s | MiB |")
    print("|---|---|---|---|---:|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for subject in subjects(workdir):
            if args.only not in f"{subject.name} {subject.variant}":
                continue
            theirs = run_sentryward(command, subject, workdir, args.timeout)
            ours = run_ours(subject, args.timeout)
            expected = subject.expected or "—"
            print(
                f"| `{subject.name}` | {subject.variant} | {expected} | {_cell(theirs)} | {_cell(ours)} |", flush=True
            )
            rows.append({"kernel": subject.name, "variant": subject.variant, "expected": expected,
                         "sentryward": vars(theirs), "ours": vars(ours)})  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
