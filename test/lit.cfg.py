"""lit configuration for the FileCheck suites under test/.

Works without an activated virtual environment: the tools are taken from the folder of the Python
that runs lit (the venv's), so `.venv/bin/lit test` is enough.
"""

import os
import sys

import lit.formats

config.name = "spatial-dialect"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

venv_bin = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([venv_bin, config.environment.get("PATH", "")])
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(
    ("%examples", os.path.join(os.path.dirname(config.test_source_root), "examples"))
)
# Every dialect test checks the printed form after a full round trip: the input (custom or generic)
# is printed in the custom form, re-printed generic, parsed back and printed custom again, so both
# syntaxes must parse and print to the same IR.
config.substitutions.append(
    (
        "%roundtrip",
        "spatial-opt %s --split-input-file | spatial-opt --split-input-file --print-op-generic "
        "| spatial-opt --split-input-file | filecheck %s",
    )
)
# The generic form alone: printed generic, parsed back and printed generic again must say the same
# (the CHECK-GENERIC lines), as xDSL's own tests do with XDSL_GENERIC_ROUNDTRIP.
config.substitutions.append(
    (
        "%generic_roundtrip",
        "spatial-opt %s --split-input-file --print-op-generic "
        "| spatial-opt --split-input-file --print-op-generic "
        "| filecheck %s --check-prefix=CHECK-GENERIC",
    )
)
