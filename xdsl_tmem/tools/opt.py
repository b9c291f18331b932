"""`xdsl-tmem-opt`: xdsl-opt with our dialects, passes and targets, and located diagnostics.

Every parse, verification and pass error is printed as
`file:line:col: error: message` (plus the source line) and exits with code 1; no
input makes it print a Python traceback. With `--verify-diagnostics` or
`--parsing-diagnostics` the diagnostic goes to stdout and the exit code is 0, as
in xdsl-opt, so lit tests can FileCheck the message.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, ClassVar, cast

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.arg_spec import ArgSpec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

import xdsl_tmem
from xdsl_tmem.diagnostics import (
    SourceMap,
    diagnose,
    parse_source,
    recursion_headroom,
    verify_located,
)
from xdsl_tmem.tools import cli
from xdsl_tmem.universe import TMEM_UNIVERSE, add_tmem_dialects, available_passes, multiverse


class ToolError(Exception):
    """A usage error (unknown pass, bad option) reported without a traceback."""


class TmemOptMain(xDSLOptMain):
    version_format: ClassVar[str] = f"xdsl-tmem-opt {xdsl_tmem.__version__} (xdsl {{xdsl_version}})"

    def __init__(self, args: Sequence[str] | None = None):
        self.source_map = SourceMap()
        try:
            super().__init__(description="xdsl-tmem optimizer driver", args=args)
        except ArgSpecParseError as e:  # the pipeline's are handled in setup_pipeline: this is -t's
            raise cli.spec_syntax_error("target", self.args.target, e) from None
        self.target_spec = self.check_target(self.args.target)
        if self.args.ptxas and self.target_spec.name != "ptx":
            raise ToolError("--ptxas needs the PTX target (-t ptx)")
        if self.args.output_file is not None:
            cli.check_output_file("-o", Path(self.args.output_file))

    def check_target(self, text: str) -> ArgSpec:
        """`-t NAME{options}`: one known target with valid options, before any input is read."""
        specs = cli.parse_specs("target", text)
        if len(specs) != 1:
            raise cli.CliError(f"-t expects one target, got '{text}'")
        (spec,) = specs
        factory = self.available_targets[spec.name]  # xDSLOptMain checked the name
        if inspect.signature(factory).parameters:  # an emitter function: no options
            if spec.parameters:
                raise cli.CliError(f"target '{spec.name}' takes no options, got '{text}'")
        else:
            target_class = cast(Callable[[], type[Target]], factory)()
            cli.instantiate("target", spec, target_class)
        return spec

    # Registration: everything xDSL knows (including entry-point plugins, which
    # already contain ours when the package is installed), then our universe for
    # the uninstalled case.
    # xDSL's own registration loops, over the multiverse read once (`multiverse()`).
    def register_all_dialects(self) -> None:
        for name, factory in multiverse().all_dialects.items():
            self.ctx.register_dialect(name, factory)
        add_tmem_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in available_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        for name, factory in multiverse().all_targets.items():
            self.available_targets.setdefault(name, factory)
        for name, factory in TMEM_UNIVERSE.all_targets.items():
            self.available_targets.setdefault(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        # xDSL's -p and -t help list every stock pass and target (~100): say what ours are instead.
        for action in arg_parser._actions:  # pyright: ignore[reportPrivateUsage]
            if "-p" in action.option_strings:
                action.help = "pass pipeline: NAME or NAME{option=value ...}, comma-separated; our passes are below, "
                action.help += "and every stock xDSL pass is accepted too"
            elif "-t" in action.option_strings:
                action.help = "output: mlir (default), ptx{arch=...} (ours, below) or a stock xDSL target"
        plain_help = arg_parser.format_help
        # the passes' classes load for --help only (start-up stays short)
        setattr(arg_parser, "format_help", lambda: plain_help() + "\n" + cli.ours_help())  # noqa: B010
        arg_parser.add_argument(
            "--ptxas",
            action="store_true",
            help="with -t ptx: assemble the emitted PTX with ptxas -v and report each kernel's registers, "
            "spills, stack, shared memory and barriers on stderr; a ptxas error fails the run",
        )
        arg_parser.add_argument(
            "--input-format",
            dest="frontend",
            choices=list(self.available_frontends),
            help="the input's language (same as -f); by default the file extension's (.ptx: PTX, else MLIR)",
        )

    def output_resulting_program(self, prog: ModuleOp) -> str:
        text = super().output_resulting_program(prog)
        if self.args.ptxas:
            # the backend only where it is used: `-t mlir` runs never import it
            from xdsl_tmem.backend.ptxas import PtxasError, PtxasNotFound, assemble
            from xdsl_tmem.backend.target import PTXTarget

            arch = PTXTarget.from_spec(self.target_spec).arch
            try:
                stats = assemble(text, arch)
            except PtxasNotFound as e:
                raise ToolError(str(e)) from None
            except PtxasError as e:
                raise ToolError(f"ptxas rejected the generated PTX for {arch}:\n{e}") from None
            for kernel in stats:
                sys.stderr.write(f"ptxas: {kernel.summary()}\n")
        return text

    def register_all_frontends(self) -> None:
        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            return parse_source(
                self.ctx, io.read(), self.get_input_name(), self.source_map,
                implicit_module=not self.args.no_implicit_module,
            )  # fmt: skip

        def parse_ptx(io: IO[bytes]) -> ModuleOp:
            from xdsl_tmem.frontend import load_ptx  # only for PTX input: keeps start-up short

            return load_ptx(io.read(), self.get_input_name(), self.source_map)

        self.available_frontends["mlir"] = parse_mlir
        self.available_frontends["ptx"] = parse_ptx  # PTX text: docs/ptx-frontend.md

    def setup_pipeline(self) -> None:
        def callback(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
            if not self.args.disable_verify:
                verify_located(module, self.source_map)
            if previous is not None and following is not None and self.args.print_between_passes:
                print(f"IR after {previous.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n")

        self.pipeline = cli.parse_pass_pipeline(self.available_passes, self.args.passes, callback)

    def run(self) -> int:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Process every input chunk; return the exit code (0 ok, 1 errors)."""
        chunks, extension = self.prepare_input()
        output = self.prepare_output()
        expecting = self.args.verify_diagnostics or self.args.parsing_diagnostics
        failed = False
        try:
            for i, (chunk, offset) in enumerate(chunks):
                self.source_map.line_offset = offset
                try:
                    if i > 0:
                        output.write("// -----\n")
                    module = self.parse_chunk(chunk, extension, offset)
                    if module is not None:
                        self.apply_passes(module)
                        output.write(self.output_resulting_program(module))
                    output.flush()
                except (ParseError, DiagnosticException, ToolError) as e:
                    diagnostic = diagnose(e, self.source_map)
                    if expecting:
                        output.write(diagnostic.render())
                    else:
                        sys.stderr.write(diagnostic.render())
                        failed = True
                finally:
                    chunk.close()
        finally:
            if output is not sys.stdout:
                output.close()
        return 1 if failed else 0


def _internal_error(e: BaseException) -> str:
    return (
        f"error: internal error in xdsl-tmem-opt: {type(e).__name__}: {e}\n"
        "note: this is a bug in xdsl-tmem; set XDSL_TMEM_TRACEBACK=1 to see the traceback\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with recursion_headroom():
            return TmemOptMain(argv).run()
    except KeyboardInterrupt:
        sys.stderr.write("xdsl-tmem-opt: interrupted\n")
        return cli.EXIT_INTERRUPTED
    except SystemExit as e:  # argparse: usage errors (2) are ours to number; --help and --version are 0
        return 1 if e.code == 2 else e.code if isinstance(e.code, int) else 1
    except (ParseError, DiagnosticException, ToolError, OSError) as e:
        sys.stderr.write(diagnose(e, SourceMap()).render())
        return 1
    except (argparse.ArgumentError, cli.CliError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 1
    except Exception as e:
        if os.environ.get("XDSL_TMEM_TRACEBACK"):
            raise
        sys.stderr.write(_internal_error(e))
        return 1


def entry() -> None:
    cli.exit_now(main())


if __name__ == "__main__":
    entry()
