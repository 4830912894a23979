"""tg from Python: every op's builder, in one program built the way a user would.

The program mixes tg with func and arith (a constant position), verifies, prints, and parses back
to the same text in both the custom and the generic form. Every inferred result type is compared
with the type written out by hand below, not with anything the builders compute.
"""

from __future__ import annotations

import math

import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i8,
    i32,
    i64,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from spatial_dialect import tg

BF16 = BFloat16Type()
F32 = Float32Type()


def t(shape: list[int], elt=BF16) -> TensorType:
    return TensorType(elt, shape)


ARGS = {
    "x": t([8, 64]),
    "ids": t([8], i32),
    "table": t([100, 64]),
    "w": t([1, 64]),
    "wh": t([1, 16]),
    "wq": t([64, 64]),
    "wk": t([64, 32]),
    "wup": t([64, 128]),
    "cos": t([8, 8]),
    "sin": t([8, 8]),
    "kcache": t([32, 32]),
    "vcache": t([32, 32]),
    "ai": t([8, 32], i8),
    "bi": t([32, 4], i8),
    "qv": t([64, 32], i8),
    "qs": t([2, 32], Float16Type()),
    "tv": t([100, 64], i8),  # a Q8_0 table [vocab, d], blocks along d
    "ts": t([100, 2], Float16Type()),
    "router": t([64, 4]),
    "experts_up": t([4 * 64, 32]),  # 4 experts of 64 x 32, stacked by rows
    "experts_down": t([4 * 32, 64]),
    "shared_weight": t([64, 1]),
    "cw": t([4, 64]),
    "cs": t([3, 64]),
    "ga": t([8, 4], F32),
    "gl": t([1, 4], F32),
    "st": t([64, 16], F32),
    "upos": t([8], i32),  # the batched ops: 8 users' positions
    "blocks": t([8, 2], i32),  # their block table: 2 blocks of 4 rows each
}


def build_program() -> tuple[ModuleOp, dict[str, tuple[object, str]]]:
    """A func of every tg op; returns the module and, per name, (op, expected result type)."""
    built: dict[str, tuple[object, str]] = {}

    def keep(name: str, op, expected: str):
        built[name] = (op, expected)
        return op

    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        f = func.FuncOp("step", (list(ARGS.values()), [t([8], i32), t([8, 4], i32)]))
    with ImplicitBuilder(f.body) as args:
        a = dict(zip(ARGS, args, strict=True))
        pos = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t([1], i32), [24]))

        emb = keep("gather_rows", tg.GatherRowsOp(a["table"], a["ids"]), "tensor<8x64xbf16>")
        n = keep("rms_norm", tg.RmsNormOp(emb, a["w"], eps=1e-6), "tensor<8x64xbf16>")
        keep(
            "rms_norm_width",
            tg.RmsNormOp(emb, a["wh"], a["x"], eps=1e-5, width=16),
            "tensor<8x64xbf16>",
        )
        st = keep("rms_stats", tg.RmsStatsOp(emb, a["x"]), "tensor<8x1xf32>")
        keep(
            "rms_apply",
            tg.RmsApplyOp(emb, st, a["w"], a["x"], eps=1e-6, n=128),
            "tensor<8x64xbf16>",
        )
        ln = keep("layer_norm", tg.LayerNormOp(n, a["w"], a["w"], eps=1e-5), "tensor<8x64xbf16>")
        q = keep("matmul", tg.MatmulOp(ln, a["wq"]), "tensor<8x64xbf16>")
        k = keep("matmul_k", tg.MatmulOp(ln, a["wk"]), "tensor<8x32xbf16>")
        keep("matmul_f32", tg.MatmulOp(ln, a["wk"], element_type=F32), "tensor<8x32xf32>")
        qr = keep("rope", tg.RopeOp(q, a["cos"], a["sin"]), "tensor<8x64xbf16>")
        keep(
            "rope_interleaved",
            tg.RopeOp(q, a["cos"], a["sin"], head_dim=16, style="interleaved"),
            "tensor<8x64xbf16>",
        )
        kc = keep("set_rows", tg.SetRowsOp(a["kcache"], k, pos), "tensor<32x32xbf16>")
        vc = keep("set_rows_v", tg.SetRowsOp(a["vcache"], k, pos), "tensor<32x32xbf16>")
        att = keep(
            "attention",
            tg.AttentionOp(qr, kc, vc, pos, heads=4, kv_heads=2, causal=True),
            "tensor<8x64xbf16>",
        )
        keep(
            "attention_f32",
            tg.AttentionOp(
                q, k, k, heads=4, kv_heads=2, causal=False, scale=0.25, element_type=F32
            ),
            "tensor<8x64xf32>",
        )
        upos, blocks = a["upos"], a["blocks"]
        bk = keep("batch_set_rows", tg.BatchSetRowsOp(a["kcache"], k, upos), "tensor<32x32xbf16>")
        bv = tg.BatchSetRowsOp(a["vcache"], k, upos, blocks, block_size=4)
        keep("batch_set_rows_paged", bv, "tensor<32x32xbf16>")
        ba = tg.BatchAttentionOp(qr, bk, bk, upos, heads=4, kv_heads=2)
        keep("batch_attention", ba, "tensor<8x64xbf16>")
        bp = tg.BatchAttentionOp(qr, bv, bv, upos, blocks, heads=4, kv_heads=2, block_size=4)
        keep("batch_attention_paged", bp, "tensor<8x64xbf16>")
        h = keep("add", tg.AddOp(att, a["x"]), "tensor<8x64xbf16>")
        h = keep("sub", tg.SubOp(h, a["x"]), "tensor<8x64xbf16>")
        h = keep("mul", tg.MulOp(h, a["w"]), "tensor<8x64xbf16>")  # 1xC broadcasts over rows
        h = keep("silu", tg.SiluOp(h), "tensor<8x64xbf16>")
        h = keep("sigmoid", tg.SigmoidOp(h), "tensor<8x64xbf16>")
        h = keep("softplus", tg.SoftplusOp(h), "tensor<8x64xbf16>")
        h = keep("gelu", tg.GeluOp(h), "tensor<8x64xbf16>")
        h = keep("gelu_tanh", tg.GeluOp(h, "tanh"), "tensor<8x64xbf16>")
        h = keep("scale", tg.ScaleOp(h, 0.5), "tensor<8x64xbf16>")
        h = keep("softcap", tg.SoftcapOp(h, cap=30.0), "tensor<8x64xbf16>")
        h = keep("softmax", tg.SoftmaxOp(h), "tensor<8x64xbf16>")
        up = keep("matmul_up", tg.MatmulOp(h, a["wup"]), "tensor<8x128xbf16>")
        sw = keep("swiglu", tg.SwigluOp(up, up), "tensor<8x128xbf16>")
        keep("transpose", tg.TransposeOp(sw), "tensor<128x8xbf16>")
        table_t = keep("transpose_table", tg.TransposeOp(a["table"]), "tensor<64x100xbf16>")
        logits = keep("logits", tg.MatmulOp(n, table_t), "tensor<8x100xbf16>")
        # the tied head: the table itself, read transposed
        tied = tg.MatmulOp(n, a["table"], transpose_b=True)
        keep("logits_tied", tied, "tensor<8x100xbf16>")
        ids = keep("argmax", tg.ArgmaxOp(logits), "tensor<8xi32>")
        ii = keep("matmul_i8", tg.MatmulOp(a["ai"], a["bi"], element_type=i32), "tensor<8x4xi32>")
        ii = keep("relu", tg.ReluOp(ii), "tensor<8x4xi32>")
        hs = tg.HeadSliceOp(q, head_dim=16, first=1, heads=2)
        hs = keep("head_slice", hs, "tensor<8x32xbf16>")
        keep("join", tg.JoinOp([hs, q]), "tensor<8x96xbf16>")
        keep("head_matmul", tg.HeadMatmulOp(q, a["wq"], heads=1), "tensor<8x64xbf16>")
        i8s = keep("int_requant", tg.IntRequantOp(ii, scale=0.5), "tensor<8x4xi8>")
        keep("int_clamp", tg.IntClampOp(i8s, lo=-3, hi=3), "tensor<8x4xi8>")
        deq = tg.DequantizeQ8_0Op(a["qv"], a["qs"], axis=0)
        keep("dequantize_q8_0", deq, "tensor<64x32xf32>")
        keep("matmul_q8_0", tg.MatmulQ8_0Op(a["x"], a["qv"], a["qs"]), "tensor<8x32xbf16>")
        tied_q8 = tg.MatmulQ8_0Op(a["x"], a["tv"], a["ts"], transpose_b=True)
        keep("matmul_q8_0_tied", tied_q8, "tensor<8x100xbf16>")
        e = [a["router"], a["experts_up"], a["experts_up"], a["experts_down"]]
        keep("moe", tg.MoeOp(a["x"], *e, top_k=2, renormalize=True), "tensor<8x64xbf16>")
        shared = [a["wq"], a["wq"], a["wq"], a["shared_weight"]]  # a shared FFN of 64
        moe = tg.MoeOp(h, *e, shared, top_k=1, scores="sigmoid")
        keep("moe_shared", moe, "tensor<8x64xbf16>")
        conv = keep("causal_conv", tg.CausalConvOp(a["x"], a["cw"], a["cs"]), "tensor<8x64xbf16>")
        assert str(conv.new_state.type) == "tensor<3x64xbf16>"
        l2 = keep("l2_norm", tg.L2NormOp(conv.res, width=16), "tensor<8x64xbf16>")
        g = keep("decay", tg.DecayOp(a["ga"], a["gl"], a["gl"]), "tensor<8x4xf32>")
        gd = tg.GatedDeltaOp(l2, l2, conv.res, g, g, a["st"], heads=4, k_heads=4)
        keep("gated_delta", gd, "tensor<8x64xbf16>")
        assert str(gd.new_state.type) == "tensor<64x16xf32>"
        assert gd.head_dim.value.data == 16 and gd.scale.value.data == pytest.approx(0.25)
        func.ReturnOp(ids, ii)
    return module, built


def context() -> Context:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, tg.TG):
        ctx.load_dialect(dialect)
    return ctx


def generic(module: ModuleOp) -> str:
    from io import StringIO

    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def test_every_tg_op_has_a_builder_used_here():
    module, _ = build_program()
    used = {op.name for op in module.walk()}
    missing = {op.name for op in tg.TG.operations} - used
    assert not missing


def test_builders_infer_the_hand_written_result_types():
    _, built = build_program()
    wrong = {
        name: str(op.res.type) for name, (op, want) in built.items() if str(op.res.type) != want
    }
    assert not wrong


def test_built_program_verifies_prints_and_parses_back():
    module, _ = build_program()
    module.verify()
    text = str(module)
    assert "tg.rms_norm %" in text and "arith.constant" in text
    reparsed = Parser(context(), text).parse_module()
    reparsed.verify()
    assert str(reparsed) == text
    from_generic = Parser(context(), generic(module)).parse_module()
    assert str(from_generic) == text


def test_properties_become_the_contract_attributes():
    _, built = build_program()
    norm = built["rms_norm_width"][0]
    assert norm.eps == FloatAttr(1e-5, F32)
    assert norm.width == IntegerAttr(16, i64)
    rope = built["rope"][0]
    assert rope.head_dim == IntegerAttr(16, i64)  # twice the width of the cos table
    assert rope.style == StringAttr("neox")
    att = built["attention"][0]
    assert (att.heads, att.kv_heads, att.head_dim) == (
        IntegerAttr(4, i64),
        IntegerAttr(2, i64),
        IntegerAttr(16, i64),
    )
    assert att.causal == IntegerAttr.from_bool(True)
    assert att.scale == FloatAttr(1 / math.sqrt(16), F32)
    assert built["scale"][0].factor == FloatAttr(0.5, F32)
    assert built["softcap"][0].cap == FloatAttr(30.0, F32)
    assert "approximate" not in built["gelu"][0].properties  # the default stays implicit
    assert built["gelu_tanh"][0].approximate == StringAttr("tanh")


def test_generic_form_of_a_built_op_is_the_contract():
    x = create_ssa_value(t([4, 64], F32))
    w = create_ssa_value(t([1, 64], F32))
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        f = func.FuncOp("f", ([x.type, w.type], [x.type]))
    with ImplicitBuilder(f.body) as (xa, wa):
        func.ReturnOp(tg.RmsNormOp(xa, wa, eps=1e-6))
    assert (
        '"tg.rms_norm"(%0, %1) <{eps = 1.000000e-06 : f32}> : '
        "(tensor<4x64xf32>, tensor<1x64xf32>) -> tensor<4x64xf32>"
    ) in generic(module)


def test_existing_signatures_still_work():
    a, b = create_ssa_value(t([4, 8], F32)), create_ssa_value(t([8, 2], F32))
    mm = tg.MatmulOp(a, b, t([4, 2], F32))
    mm.verify()
    silu = tg.SiluOp(mm.res)
    assert silu.res.type == t([4, 2], F32)
    scale = tg.ScaleOp(mm.res, properties={"factor": FloatAttr(2.0, F32)})
    scale.verify()


def test_a_built_op_that_breaks_a_rule_fails_verification_by_name():
    x = create_ssa_value(t([8, 64]))
    cos = create_ssa_value(t([4, 8]))
    with pytest.raises(VerifyException, match="tg.rope: cos is 4x8; it must be 8x8"):
        tg.RopeOp(x, cos, cos).verify()


def test_builders_refuse_what_they_cannot_read_a_shape_from():
    v = create_ssa_value(t([8]))
    with pytest.raises(VerifyException, match=r"tg.transpose: x must be a matrix \(rank 2\)"):
        tg.TransposeOp(v)
    m = create_ssa_value(t([8, 8], F32))
    with pytest.raises(TypeError, match="tg.rms_norm: eps must be a float"):
        tg.RmsNormOp(m, m, eps="small")
    with pytest.raises(TypeError, match="tg.attention: heads must be an int"):
        tg.AttentionOp(m, m, m, heads=2.0, kv_heads=1, causal=True)
    with pytest.raises(TypeError, match="tg.attention: causal must be a bool"):
        tg.AttentionOp(m, m, m, heads=2, kv_heads=1, causal=1)
    with pytest.raises(TypeError, match="give result_type or element_type"):
        tg.MatmulOp(m, m, t([8, 8], F32), element_type=F32)
