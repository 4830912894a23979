"""DRAM capacity (issue 16): every preset declares its device memory, link lays the DRAM
tensors out and refuses a program that does not fit by name (DramExceeded), dram-mem overrides."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from xdsl.parser import Parser

from spatial_dialect.passes.dram_layout import DramExceeded
from spatial_dialect.passes.link import LinkPass
from spatial_dialect.passes.pipeline import default_context
from spatial_dialect.passes.target_choice import parse_bytes
from spatial_dialect.targets import load_target
from spatial_dialect.targets.presets import PRESETS

ROOT = Path(__file__).resolve().parents[2]


def generate():
    spec = importlib.util.spec_from_file_location("generate", ROOT / "examples" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate"] = module
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


# Llama-3-70B: config.json of meta-llama/Meta-Llama-3-70B (hidden 8192, 64 heads, 8 kv heads,
# intermediate 28672, 80 layers, rms_norm_eps 1e-5).
def llama3_70b(layers: int) -> str:
    g = generate()
    model = g.Model("llama3_70b", 8192, 64, 8, 128, 28672, 1e-5, qk_norm=False)
    return g.stacked_layers_program(model, 1, 4096, layers)


def link(source: str, target: str, **options):
    ctx = default_context()
    module = Parser(ctx, source).parse_module()
    LinkPass(target, **options).apply(ctx, module)
    return module


@pytest.mark.parametrize(
    "name, gb", [("wormhole_n150", 12), ("blackhole_p150", 32), ("rtx3060", 12), ("h100", 80)]
)
def test_presets_declare_their_device_memory(name, gb):
    assert PRESETS[name].dram_bytes == gb * 2**30
    assert PRESETS["h200"].dram_bytes == 141 * 10**9
    assert PRESETS["plasticine"].dram_bytes is not None


def test_llama3_70b_decode_is_refused_on_n150_with_the_numbers():
    with pytest.raises(DramExceeded) as err:
        link(llama3_70b(80), "wormhole_n150")
    e = err.value
    assert e.target == "wormhole_n150" and e.capacity == 12 * 2**30
    assert e.needed > 130 * 10**9
    assert "DramExceeded: needs" in str(e) and "largest:" in str(e)


def test_one_layer_fits_and_dram_mem_overrides():
    link(llama3_70b(1), "wormhole_n150")  # about 1.8 GB
    link(llama3_70b(80), "wormhole_n150", dram_mem="400GB")
    with pytest.raises(DramExceeded):
        link(llama3_70b(1), "h100", dram_mem="1GB")


def test_byte_units():
    assert parse_bytes("400GB", "dram-mem") == 400 * 10**9
    assert parse_bytes("12GiB", "dram-mem") == 12 * 2**30
    assert parse_bytes(1024, "dram-mem") == 1024
    with pytest.raises(Exception, match="dram-mem must be a positive number of bytes"):
        parse_bytes("lots", "dram-mem")


def test_a_target_without_dram_is_unchecked():
    t = replace(load_target("h100"), dram_bytes=None)
    assert t.dram_bytes is None
