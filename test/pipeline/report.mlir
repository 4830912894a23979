// -t report: one JSON object, the contract of docs/architecture.md#outputs (more keys are welcome).
// RUN: spatial-opt %s -p spatial-pipeline -t report | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=h100}' -t report | filecheck %s --check-prefix=GPU

func.func @gemm(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xbf16> {
  %c = tg.matmul %a, %b : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  func.return %c : tensor<256x256xbf16>
}
// Roofline on Wormhole: 2 x 256^3 FLOPs over 64 sites x 2 x 32^3 / 64 FLOP a cycle = 512 cycles
// of compute; DRAM: (3 x 64 tiles) x 2048 bytes at 288 bytes a cycle = 1366 cycles: 1.366 us.
// DRAM bytes of the plan: A and B read once (a row and a column of sites share them by
// multicast) and C written once, 3 x 64 x 2048 = 393216. The prediction moves them at the
// 267 of 288 GB/s Wormhole sustains; the roofline keeps the peak.
// CHECK:      "target": "wormhole_n150",
// CHECK:      "sections": [
// CHECK:          "name": "c",
// CHECK-NEXT:     "op": "tg.matmul",
// CHECK-NEXT:     "plan": {
// CHECK-NEXT:       "kind": "blocked",
// CHECK:          "predicted_cycles": 3248,
// CHECK-NEXT:     "predicted_us": 3.248,
// CHECK-NEXT:     "roofline_us": 1.366,
// CHECK:          "dram_bytes": 393216,
// CHECK-NEXT:     "noc_bytes": {{[0-9]+}},
// CHECK-NEXT:     "sites": 64,
// CHECK-NEXT:     "site_ranges": 1,
// 2 pages of 8 tiles of A, 2 of B and a ring of two 1-tile output pages (the output is not
// the f32 accumulator's type, so it does not accumulate in place): (16 + 16 + 2) x 2048 bytes.
// CHECK-NEXT:     "peak_local_bytes": 69632
// The same bytes by tensor: 64 tiles of 2048 bytes each.
// CHECK-NEXT:     "dram_bytes_by_tensor": {
// CHECK-NEXT:       "a": 131072,
// CHECK-NEXT:       "b": 131072,
// CHECK-NEXT:       "c": 131072
// CHECK:      "total": {
// CHECK-NEXT:   "predicted_us": 3.248,
// CHECK-NEXT:   "roofline_us": 1.366
// GPU:      "target": "h100",
// GPU:      "sharing": {},
// GPU-NEXT: "multicast": []
