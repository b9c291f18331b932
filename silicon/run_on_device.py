"""Run every program of `silicon/programs/` on a GPU and write the fixtures.

    python3 silicon/run_on_device.py OUT_DIR [--fake] [--only NAME ...] [--programs DIR]

For each spec `programs/<name>.json` (kernel, PTX file, launch, parameter buffers) it loads
the PTX with the CUDA driver API (`cuModuleLoadData`: the driver's JIT assembles it for the
device), fills the buffers, launches with `cuLaunchKernelEx` (grid, block, cluster
dimensions, dynamic shared memory), reads every output buffer back and writes one
`OUT_DIR/fixtures.json` holding a fixture per program (the format is in
`tests/silicon/README.md`). The file is rewritten after every program, so a run cut
short still returns what it recorded; a program that fails records its error instead of
outputs, and the context is reset before the next one.

A parameter may be a tensor map: the runner encodes it with `cuTensorMapEncodeTiled` over
the device address of the buffer it names and passes the 128 bytes by value. A spec with
`encode_checks` instead of a kernel records the driver's verdict on each description.
`--programs silicon/programs/tma` runs the TMA specs.

`--fake` replaces the GPU by a launcher that checks the launch and returns the initial
buffers: a dry run of everything but the kernels, on a machine without a GPU.

Needs Python 3.11+ and, for a real run, `cuda.bindings` (cuda-python); no numpy.
"""

from __future__ import annotations

import argparse
import base64
import ctypes
import datetime
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

PROGRAMS = Path(__file__).resolve().parent / "programs"
WATCHDOG_S = 60.0
"""A launch that has not finished after this long is taken as hung: the fixtures recorded so
far are written and the process exits (every wait in the programs is bounded, so a hang
means a barrier count the hardware does not accept)."""


@dataclass(frozen=True)
class Buffer:
    name: str
    dtype: str
    nbytes: int
    init: dict[str, str]


@dataclass(frozen=True)
class TensorMapParam:
    """A 128-byte `CUtensorMap` kernel parameter (`.param .align 64 .b8 name[128]`), encoded on the
    device by `cuTensorMapEncodeTiled` from `desc` over the global buffer `desc["buffer"]`
    (+ `desc["offset"]` bytes); the description's keys are in tests/silicon/README.md."""

    name: str
    desc: dict[str, Any]


TENSOR_MAP_KEYS = (
    "buffer", "offset", "data_type", "rank", "global_dims", "global_strides", "box_dims", "element_strides",
    "interleave", "swizzle", "l2_promotion", "oob_fill",
)  # fmt: skip


def check_tensor_map(desc: dict[str, Any], where: str) -> None:
    if sorted(desc) != sorted(TENSOR_MAP_KEYS):
        raise ValueError(f"{where}: a tensor map has the keys {sorted(TENSOR_MAP_KEYS)}, not {sorted(desc)}")


@dataclass(frozen=True)
class Spec:
    name: str
    kernel: str
    ptx_file: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int]
    dynamic_smem: int
    buffers: tuple[Buffer, ...]
    outputs: tuple[str, ...]
    extra: dict[str, Any]
    tensor_maps: tuple[TensorMapParam, ...] = ()
    order: tuple[str, ...] = ()
    """Every kernel parameter's name in order (buffers and tensor maps); empty: the buffers."""


def dim3(v: list[int]) -> tuple[int, int, int]:
    if len(v) != 3 or any(not isinstance(x, int) or x < 1 for x in v):
        raise ValueError(f"a launch dimension is three positive integers, not {v!r}")
    return (v[0], v[1], v[2])


def load_spec(path: Path) -> Spec:
    raw: dict[str, Any] = json.loads(path.read_text())
    if "encode_checks" in raw:  # no kernel: descriptions for cuTensorMapEncodeTiled alone
        for check in raw["encode_checks"]:
            check_tensor_map(check["tensor_map"], f"{path.name}: {check['name']}")
        return Spec(
            path.stem,
            "",
            "",
            (1, 1, 1),
            (1, 1, 1),
            (1, 1, 1),
            0,
            (),
            (),
            {"encode_checks": raw["encode_checks"], "buffer_bytes": int(raw["buffer_bytes"])},
        )
    buffers = tuple(
        Buffer(p["name"], p["buffer"]["dtype"], int(p["buffer"]["nbytes"]), p["buffer"]["init"])
        for p in raw["params"]
        if "buffer" in p
    )
    names = {b.name for b in buffers}
    tensor_maps = tuple(TensorMapParam(p["name"], p["tensor_map"]) for p in raw["params"] if "tensor_map" in p)
    for tm in tensor_maps:
        check_tensor_map(tm.desc, f"{path.name}: {tm.name}")
        if tm.desc["buffer"] not in names:
            raise ValueError(f"{path.name}: tensor map {tm.name} names buffer {tm.desc['buffer']!r}, not a parameter")
    outputs = tuple(raw["outputs"])
    if not set(outputs) <= names:
        raise ValueError(f"{path.name}: outputs {outputs} are not all parameters {sorted(names)}")
    grid, cluster = dim3(raw["grid"]), dim3(raw["cluster"])
    if any(g % c for g, c in zip(grid, cluster, strict=True)):
        raise ValueError(f"{path.name}: grid {grid} is not a multiple of cluster {cluster}")
    extra = {k: v for k, v in raw.items() if k in ("generated", "tma")}
    return Spec(
        name=path.stem,
        kernel=raw["kernel"],
        ptx_file=raw["ptx"],
        grid=grid,
        block=dim3(raw["block"]),
        cluster=cluster,
        dynamic_smem=int(raw["dynamic_smem"]),
        buffers=buffers,
        outputs=outputs,
        extra=extra,
        tensor_maps=tensor_maps,
        order=tuple(p["name"] for p in raw["params"]) if tensor_maps else (),
    )


def encode(data: bytes) -> dict[str, str]:
    return {"encoding": "zlib+base64", "data": base64.b64encode(zlib.compress(data, 9)).decode()}


def decode(blob: dict[str, str], nbytes: int) -> bytes:
    if blob["encoding"] == "zeros":
        return bytes(nbytes)
    if blob["encoding"] != "zlib+base64":
        raise ValueError(f"unknown buffer encoding {blob['encoding']!r}")
    data = zlib.decompress(base64.b64decode(blob["data"]))
    if len(data) != nbytes:
        raise ValueError(f"buffer holds {len(data)} bytes, expected {nbytes}")
    return data


class Launcher(Protocol):
    def describe(self) -> dict[str, str]: ...

    def run(self, spec: Spec, ptx: str, inputs: list[bytes]) -> list[bytes]:
        """Launch the kernel on buffers filled with `inputs`; return every buffer afterwards."""
        ...

    def reset(self) -> None: ...

    def encode_checks(self, checks: list[dict[str, Any]], buffer_bytes: int) -> list[dict[str, Any]]:
        """`cuTensorMapEncodeTiled`'s verdict on each description, over one buffer of `buffer_bytes`."""
        ...


class FakeLauncher:
    """No GPU: checks what a real launch would need and returns the buffers unchanged."""

    def describe(self) -> dict[str, str]:
        return {"name": "fake (dry run)", "driver": "none", "cuda_driver_api": "none", "compute_capability": "none"}

    def run(self, spec: Spec, ptx: str, inputs: list[bytes]) -> list[bytes]:
        if f".entry {spec.kernel}(" not in ptx:
            raise ValueError(f"{spec.ptx_file} has no entry {spec.kernel}")
        threads = spec.block[0] * spec.block[1] * spec.block[2]
        if threads > 1024 or spec.cluster[0] * spec.cluster[1] * spec.cluster[2] > 8:
            raise ValueError(f"{spec.name}: launch too large")
        return [bytes(b) for b in inputs]

    def reset(self) -> None:
        pass

    def encode_checks(self, checks: list[dict[str, Any]], buffer_bytes: int) -> list[dict[str, Any]]:
        return [{**c, "result": "fake", "code": -1} for c in checks]


class CudaLauncher:
    """The CUDA driver API through cuda-python (`cuda.bindings.driver`)."""

    def __init__(self) -> None:
        from cuda.bindings import driver  # type: ignore[import-not-found]

        self.drv: Any = driver
        self.check(driver.cuInit(0))
        self.dev = self.check(driver.cuDeviceGet(0))
        self.ctx = self.check(driver.cuDevicePrimaryCtxRetain(self.dev))
        self.check(driver.cuCtxSetCurrent(self.ctx))

    def check(self, result: Any) -> Any:
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            _, name = self.drv.cuGetErrorName(err)
            raise RuntimeError(f"CUDA driver error {int(err)} {name.decode() if name else ''}")
        return rest[0] if len(rest) == 1 else tuple(rest)

    def describe(self) -> dict[str, str]:
        d = self.drv
        name = self.check(d.cuDeviceGetName(256, self.dev)).split(b"\0")[0].decode()
        major = self.check(
            d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev)
        )
        minor = self.check(
            d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev)
        )
        api = int(self.check(d.cuDriverGetVersion()))
        try:
            smi = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=30, check=False,
            ).stdout.strip()  # fmt: skip
        except OSError:
            smi = "unknown"
        return {
            "name": name,
            "driver": smi,
            "cuda_driver_api": f"{api // 1000}.{api % 1000 // 10}",
            "compute_capability": f"{major}.{minor}",
        }

    def encode(self, desc: dict[str, Any], address: int) -> bytes:
        """`cuTensorMapEncodeTiled` of a description at `address`: the 128 bytes of the CUtensorMap."""
        d = self.drv
        enum = lambda cls, prefix, v: getattr(cls, f"{prefix}{v}")  # noqa: E731
        tmap = self.check(
            d.cuTensorMapEncodeTiled(
                enum(d.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_", desc["data_type"]),
                desc["rank"],
                address + desc["offset"],
                [d.cuuint64_t(x) for x in desc["global_dims"]],
                # rank 1 has no strides, but the driver refuses a NULL array (silicon run 1): one unused entry
                [d.cuuint64_t(x) for x in desc["global_strides"]] or [d.cuuint64_t(0)],
                [d.cuuint32_t(x) for x in desc["box_dims"]],
                [d.cuuint32_t(x) for x in desc["element_strides"]],
                enum(d.CUtensorMapInterleave, "CU_TENSOR_MAP_INTERLEAVE_", desc["interleave"]),
                enum(d.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_", desc["swizzle"]),
                enum(d.CUtensorMapL2promotion, "CU_TENSOR_MAP_L2_PROMOTION_", desc["l2_promotion"]),
                enum(d.CUtensorMapFloatOOBfill, "CU_TENSOR_MAP_FLOAT_OOB_FILL_", desc["oob_fill"]),
            )
        )
        words = [int(w) for w in tmap.opaque]
        return b"".join(w.to_bytes(8, "little") for w in words)

    def encode_checks(self, checks: list[dict[str, Any]], buffer_bytes: int) -> list[dict[str, Any]]:
        d = self.drv
        base = self.check(d.cuMemAlloc(buffer_bytes))
        out: list[dict[str, Any]] = []
        try:
            for c in checks:
                try:
                    self.encode(c["tensor_map"], int(base))
                    out.append({**c, "result": "CUDA_SUCCESS", "code": 0})
                except RuntimeError as e:  # check() names the driver error
                    words = str(e).split()
                    out.append({**c, "result": words[-1], "code": int(words[3])})
                except Exception as e:  # the bindings refused the arguments before the driver saw them
                    out.append({**c, "result": f"bindings: {type(e).__name__}: {e}", "code": -1})
        finally:
            d.cuMemFree(base)
        return out

    def run(self, spec: Spec, ptx: str, inputs: list[bytes]) -> list[bytes]:
        d = self.drv
        module = self.check(d.cuModuleLoadData(ptx.encode() + b"\0"))
        try:
            func = self.check(d.cuModuleGetFunction(module, spec.kernel.encode()))
            ptrs = [self.check(d.cuMemAlloc(max(len(b), 1))) for b in inputs]
            try:
                for p, b in zip(ptrs, inputs, strict=True):
                    self.check(d.cuMemcpyHtoD(p, b, len(b)))
                if spec.dynamic_smem > 48 * 1024:
                    attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                    self.check(d.cuFuncSetAttribute(func, attr, spec.dynamic_smem))
                cfg = d.CUlaunchConfig()
                cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = spec.grid
                cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = spec.block
                cfg.sharedMemBytes = spec.dynamic_smem
                cfg.hStream = 0
                attrs: list[Any] = []
                if spec.cluster != (1, 1, 1):
                    a = d.CUlaunchAttribute()
                    a.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
                    a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = spec.cluster
                    attrs.append(a)
                cfg.attrs = attrs
                cfg.numAttrs = len(attrs)
                # kernelParams: an array of pointers, each to a u64 device address or a 128-byte tensor map
                address = {b.name: int(p) for b, p in zip(spec.buffers, ptrs, strict=True)}
                maps = {tm.name: self.encode(tm.desc, address[tm.desc["buffer"]]) for tm in spec.tensor_maps}
                values: list[Any] = [
                    (ctypes.c_uint8 * 128).from_buffer_copy(maps[n]) if n in maps else ctypes.c_uint64(address[n])
                    for n in spec.order or [b.name for b in spec.buffers]
                ]
                argv = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
                self.check(d.cuLaunchKernelEx(cfg, func, ctypes.addressof(argv), 0))
                self.check(d.cuCtxSynchronize())
                out: list[bytes] = []
                for p, b in zip(ptrs, inputs, strict=True):
                    host = bytearray(len(b))
                    buf = (ctypes.c_char * len(b)).from_buffer(host)
                    self.check(d.cuMemcpyDtoH(ctypes.addressof(buf), p, len(b)))
                    out.append(bytes(host))
                return out
            finally:
                for p in ptrs:
                    d.cuMemFree(p)
        finally:
            d.cuModuleUnload(module)

    def reset(self) -> None:
        d = self.drv
        d.cuDevicePrimaryCtxRelease(self.dev)
        d.cuDevicePrimaryCtxReset(self.dev)
        self.ctx = self.check(d.cuDevicePrimaryCtxRetain(self.dev))
        self.check(d.cuCtxSetCurrent(self.ctx))


def params_of(spec: Spec) -> list[dict[str, Any]]:
    buffers = {b.name: {"name": b.name, "dtype": b.dtype, "nbytes": b.nbytes, "init": b.init} for b in spec.buffers}
    maps = {tm.name: {"name": tm.name, "tensor_map": tm.desc} for tm in spec.tensor_maps}
    return [buffers.get(n) or maps[n] for n in spec.order or list(buffers)]


def fixture(spec: Spec, ptx: str, device: dict[str, str], recorded: str) -> dict[str, Any]:
    """The fixture of one program, without its outputs."""
    return {
        "name": spec.name,
        "ptx": spec.ptx_file,
        "ptx_sha256": hashlib.sha256(ptx.encode()).hexdigest(),
        "kernel": spec.kernel,
        "launch": {
            "grid": list(spec.grid),
            "block": list(spec.block),
            "cluster": list(spec.cluster),
            "dynamic_smem": spec.dynamic_smem,
        },
        "params": params_of(spec),
        "device": device,
        "loaded_with": "cuModuleLoadData (the driver's PTX JIT, default options)",
        "recorded": recorded,
        **spec.extra,
    }


def run_all(launcher: Launcher, specs: list[Spec], out: Path) -> dict[str, Any]:
    device = launcher.describe()
    result: dict[str, Any] = {"device": device, "fixtures": []}
    dest = out / "fixtures.json"

    def flush() -> None:
        dest.write_text(json.dumps(result, indent=1) + "\n")

    for spec in specs:
        if "encode_checks" in spec.extra:
            recorded = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            checks = launcher.encode_checks(spec.extra["encode_checks"], spec.extra["buffer_bytes"])
            result["fixtures"].append(
                {"name": spec.name, "encode_checks": checks, "device": device, "recorded": recorded}
            )
            print(f"{spec.name}: {sum(c['code'] == 0 for c in checks)} of {len(checks)} accepted", flush=True)
            flush()
            continue
        ptx = (PROGRAMS / spec.ptx_file).read_text()
        recorded = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        fx = fixture(spec, ptx, device, recorded)
        inputs = [decode(b.init, b.nbytes) for b in spec.buffers]
        done = threading.Event()

        def watchdog(name: str = spec.name, done: threading.Event = done) -> None:
            if not done.wait(WATCHDOG_S):
                print(f"{name}: no result after {WATCHDOG_S:.0f} s, taken as hung; stopping", flush=True)
                result["hung"] = name
                flush()
                sys.stdout.flush()
                os._exit(3)

        threading.Thread(target=watchdog, daemon=True).start()
        t0 = time.perf_counter()
        try:
            after = launcher.run(spec, ptx, inputs)
            fx["outputs"] = {
                b.name: {"dtype": b.dtype, "nbytes": b.nbytes, **encode(data)}
                for b, data in zip(spec.buffers, after, strict=True)
                if b.name in spec.outputs
            }
            status = "ok"
        except Exception as e:  # a failing program is recorded, the rest still run
            fx["error"] = f"{type(e).__name__}: {e}"
            status = fx["error"]
            result["fixtures"].append(fx)
            flush()  # a sticky fault (illegal instruction) can make the reset fail too
            result["fixtures"].pop()
            launcher.reset()
        finally:
            done.set()
        print(f"{spec.name}: {status} ({time.perf_counter() - t0:.2f} s)", flush=True)
        result["fixtures"].append(fx)
        flush()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--fake", action="store_true", help="dry run without a GPU")
    ap.add_argument("--only", nargs="*", default=None, help="spec names to run (default: all)")
    ap.add_argument("--programs", type=Path, default=PROGRAMS, help="the folder of specs (default: programs/)")
    args = ap.parse_args(argv)
    specs = [load_spec(p) for p in sorted(args.programs.glob("*.json"))]
    # generated programs first: they use no cross-thread synchronisation, so they cannot hang
    specs.sort(key=lambda s: (not s.name.startswith("gen_"), s.name))
    if args.only:
        specs = [s for s in specs if s.name in set(args.only)]
    args.out.mkdir(parents=True, exist_ok=True)
    launcher: Launcher = FakeLauncher() if args.fake else CudaLauncher()
    result = run_all(launcher, specs, args.out)
    failed = [f["name"] for f in result["fixtures"] if "error" in f]
    print(f"{len(result['fixtures'])} programs, {len(failed)} failed {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
