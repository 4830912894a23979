// RUN: spatial-opt %s -p 'spatial-pipeline{target=h100}' -t triton | filecheck %s

// A Q8_0 weight's values and scales are two DRAM tensors, passed side by side; the activation's
// Q8_0 view quantizes at its store; the int8 dot (h100 has an i8 matrix path and a register
// accumulator: targets/quant.py) multiplies each block of 32 along K exactly into int32 and
// scales it by the two f16 scales into the f32 accumulator; `activation "float"` widens the
// weight (dequantize bf16) and multiplies bf16. `activation "q8_0_ref"` reads a view of its own,
// rounded by ggml's reference rule.

func.func @mm(%x: tensor<4x64xbf16>, %wv: tensor<64x96xi8>, %ws: tensor<2x96xf16>) -> (tensor<4x96xbf16>, tensor<4x96xbf16>, tensor<4x96xbf16>) {
  %y = tg.matmul_q8_0 %x, %wv, %ws activation "q8_0" : (tensor<4x64xbf16>, tensor<64x96xi8>, tensor<2x96xf16>) -> tensor<4x96xbf16>
  %z = tg.matmul_q8_0 %x, %wv, %ws activation "float" : (tensor<4x64xbf16>, tensor<64x96xi8>, tensor<2x96xf16>) -> tensor<4x96xbf16>
  %r = tg.matmul_q8_0 %x, %wv, %ws activation "q8_0_ref" : (tensor<4x64xbf16>, tensor<64x96xi8>, tensor<2x96xf16>) -> tensor<4x96xbf16>
  func.return %y, %z, %r : tensor<4x96xbf16>, tensor<4x96xbf16>, tensor<4x96xbf16>
}

// The view's scales have no argument: a tensor of their own, one f16 per 32 along a row.
// CHECK:      TENSORS = {
// CHECK-DAG:  'x__q8_0_0': ((4, 64), torch.int8, (4, 64)),
// CHECK-DAG:  'x__q8_0_0.scales': ((4, 2), torch.float16, (4, 2)),
// CHECK-DAG:  'x__q8_0_ref_0': ((4, 64), torch.int8, (4, 64)),
// CHECK-DAG:  'wv': ((64, 96), torch.int8, (64, 96)),
// CHECK-DAG:  'ws': ((2, 96), torch.float16, (2, 96)),
// CHECK:      }

// llama.cpp's x86 quantize_row_q8_0 per block of 32 along the row, at the store into the view:
// x * (127 / max|x|), rounded half to even by adding and taking away 1.5 * 2^23.
// CHECK-LABEL: def x__q8_0_0_kernel(T_x, T_x__q8_0_0, S_x__q8_0_0, SITES, ITEMS):
// CHECK:      q_x = tl.reshape(y, (32, 1, 32))
// CHECK-NEXT: q_a = tl.max(tl.abs(q_x), axis=2)
// CHECK-NEXT: q_d = q_a / 127.0
// CHECK-NEXT: q_i = tl.where(q_a == 0, 0.0, 127.0 / tl.where(q_a == 0, 1.0, q_a))
// CHECK-NEXT: q_v = tl.reshape((q_x * q_i[:, :, None] + 12582912.0) - 12582912.0, (32, 32))
// CHECK:      o_at = T_x__q8_0_0 + o_r[:, None] * 64 + o_c[None, :]
// CHECK-NEXT: tl.store(o_at, q_v.to(T_x__q8_0_0.dtype.element_ty), mask=o_m)
// CHECK:      tl.store(S_x__q8_0_0 + o_r[:, None] * 2 + o_q[None, :], q_d.to(tl.float16), mask=o_qm)

// The int8 dot: K 2 tiles in one block, two Q8_0 blocks of 32 per K step.
// CHECK-LABEL: def y_kernel(T_x__q8_0_0, S_x__q8_0_0, T_wv, S_wv, T_y, SITES, ITEMS):
// CHECK:      acc = tl.zeros((32, 32), dtype=tl.float32)
// CHECK-NEXT: for k0 in range(0, 2, 2):
// CHECK-NEXT:     for kb in tl.static_range(2):
// CHECK-NEXT:         kq = k0 * 32 + kb * 32
// CHECK:              da = tl.load(
// CHECK-NEXT:             S_x__q8_0_0 + rm * 2 + kq // 32,
// CHECK-NEXT:             mask=mm_ & (kq + tl.zeros_like(rm) < 64),
// CHECK:              db = tl.load(
// CHECK-NEXT:             S_wv + kq // 32 * 96 + rn,
// CHECK-NEXT:             mask=mn_ & (kq + tl.zeros_like(rn) < 64),
// CHECK:              isum = tl.dot(a, b, out_dtype=tl.int32)
// CHECK-NEXT:         acc += isum.to(tl.float32) * (da[:, None] * db[None, :])

// dequantize bf16: f32(d) * q rounded once to bf16, then the bf16 product.
// CHECK-LABEL: def z_kernel(T_x, T_wv, S_wv, T_z, SITES, ITEMS):
// CHECK:      b_d = tl.load(
// CHECK-NEXT:     S_wv + rk[:, None] // 32 * 96 + rn[None, :],
// CHECK-NEXT:     mask=mk_[:, None] & mn_[None, :],
// CHECK:      b = to_bf16(b.to(tl.float32) * b_d.to(tl.float32))
// CHECK:      acc += tl.dot(a, b, out_dtype=tl.float32)

// ggml's quantize_row_q8_0_ref: x * (1 / d), rounded half away from zero.
// CHECK-LABEL: def x__q8_0_ref_0_kernel(T_x, T_x__q8_0_ref_0, S_x__q8_0_ref_0, SITES, ITEMS):
// CHECK:      q_i = tl.where(q_d == 0, 0.0, 1.0 / tl.where(q_d == 0, 1.0, q_d))
// CHECK-NEXT: q_s = q_x * q_i[:, :, None]
// CHECK-NEXT: q_v = tl.reshape(tl.where(q_s < 0, -1.0, 1.0) * tl.floor(tl.abs(q_s) + 0.5), (32, 32))

// CHECK-LABEL: def launch(
// CHECK:      y_kernel[(3,)](
// CHECK-NEXT: t['x__q8_0_0'],
// CHECK-NEXT: t['x__q8_0_0.scales'],
// CHECK-NEXT: t['wv'],
// CHECK-NEXT: t['ws'],
// CHECK-NEXT: t['y'],
