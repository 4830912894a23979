// -t report of a deployment over a mesh: the mesh, one row per step (kind, tensor, axis, priced
// bytes, links, hops, time), and the total adds the steps' time to one chip's sections.
// RUN: spatial-opt %S/steps.mlir --split-input-file -p spatial-pipeline -t report | filecheck %s
// The memory map is one chip's, and says every chip's is the same.
// RUN: spatial-opt %S/steps.mlir --split-input-file -p spatial-pipeline -t memory-map | filecheck %s --check-prefix=MAP

// CHECK:      "target": "n300",
// CHECK:      "mesh": {
// CHECK-NEXT:   "preset": "n300",
// CHECK-NEXT:   "shape": [
// CHECK-NEXT:     2
// CHECK-NEXT:   ],
// CHECK-NEXT:   "chip": "wormhole_n150"
// CHECK-NEXT: },
// The step carries its price (15163 ns): the report reads it.
// CHECK-NEXT: "collectives": [
// CHECK-NEXT:   {
// CHECK-NEXT:     "kind": "all_reduce",
// CHECK-NEXT:     "tensor": "o",
// CHECK-NEXT:     "source": "p",
// CHECK-NEXT:     "axis": 0,
// CHECK-NEXT:     "bytes": 4096,
// CHECK-NEXT:     "links": 1,
// CHECK-NEXT:     "hops": 1,
// CHECK-NEXT:     "us": 15.163
// CHECK-NEXT:   }
// CHECK-NEXT: ],
// CHECK:      "target": "t3k",
// A step without a price is priced on the t3k's links (targets/collectives.price): the gather's
// result is 32x64 bf16 = 4096 bytes.
// CHECK:        "kind": "all_gather",
// CHECK-NEXT:   "tensor": "xa",
// CHECK-NEXT:   "source": "x",
// CHECK-NEXT:   "axis": 1,
// CHECK-NEXT:   "bytes": 4096,
// CHECK:        "kind": "reduce_scatter",
// CHECK:        "kind": "all_to_all",

// MAP: mesh n300: 2 wormhole_n150 chips; every chip's map is this one (every chip runs the same sections on its own shard)
// MAP: mesh t3k: 8 wormhole_n150 chips; every chip's map is this one
