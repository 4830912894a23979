"""spatial-opt: xdsl-opt with the tg and sp dialects, our passes and our output targets.

Every user error ends in one message on stderr and exit status 1, never a Python traceback:
parse and verifier errors, pass failures (typed diagnostics at the offending op), an unknown pass,
option or output target, a missing file. A crash inside the compiler is reported as an internal
error; SPATIAL_OPT_TRACEBACK=1 shows its traceback for whoever debugs it.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from spatial_dialect import get_all_dialects
from spatial_dialect.passes import get_all_output_targets, get_all_passes


class SpatialOptMain(xDSLOptMain):
    version_format = "spatial-opt (built on xDSL {xdsl_version})"

    def register_all_dialects(self) -> None:
        # xDSL's own dialects plus every xdsl.universe plugin, ours included once installed:
        # registering a name twice raises, so only what the plugin did not already bring.
        super().register_all_dialects()
        for name, factory in get_all_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        for name, emit in get_all_output_targets().items():
            self.available_targets[name] = emit  # type: ignore[assignment]


def _fail(message: str) -> int:
    print(f"spatial-opt: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    try:
        SpatialOptMain(description="spatial-dialect compiler driver", args=argv).run()
    except SystemExit as e:
        # argparse reports a bad flag itself and exits 2; --help and --version exit 0.
        return 0 if e.code in (0, None) else 1
    except ArgSpecParseError as e:  # a malformed `pass{...}` spec (a BaseException)
        return _fail(str(e))
    except (DiagnosticException, ParseError) as e:
        print(f"spatial-opt: error: {e}", file=sys.stderr)
        for note in getattr(e, "__notes__", []):
            print(note, file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        return _fail(f"cannot open '{e.filename}': no such file")
    except OSError as e:
        return _fail(f"cannot read '{e.filename}': {e.strerror}")
    except ValueError as e:  # an unknown pass or pass option
        return _fail(str(e))
    except Exception as e:  # noqa: BLE001 - a compiler bug still must not greet a user with a traceback
        if os.environ.get("SPATIAL_OPT_TRACEBACK"):
            traceback.print_exc()
        return _fail(
            f"internal error: {type(e).__name__}: {e} "
            "(please report it; SPATIAL_OPT_TRACEBACK=1 shows where)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
