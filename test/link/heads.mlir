// link of the head ops, made of the map and GEMM sections that exist: a head_slice is a copy whose
// load starts at the slice's tile column; a join is one copy section per part, stored at the part's
// tile column of the result and planned over the part (the `join` decision); a head_matmul copies
// each head's blocks of a and b to scratch tensors, multiplies them in a GEMM section and joins the
// products. Offsets that are not whole tiles are refused by name.
// RUN: not spatial-opt %s --split-input-file -p 'link{target=wormhole_n150}' 2>&1 | filecheck %s
// RUN: not spatial-opt %s --split-input-file -p 'spatial-pipeline{target=wormhole_n150}' 2>&1 | filecheck %s --check-prefix=PLAN

func.func @qkv(%x: tensor<40x200xbf16>) -> tensor<40x136xbf16> {
  %q = tg.head_slice %x head_dim 8 first 0 heads 8 : (tensor<40x200xbf16>) -> tensor<40x64xbf16>
  %k = tg.head_slice %x head_dim 8 first 8 heads 9 : (tensor<40x200xbf16>) -> tensor<40x72xbf16>
  %j = tg.join %q, %k : (tensor<40x64xbf16>, tensor<40x72xbf16>) -> tensor<40x136xbf16>
  func.return %j : tensor<40x136xbf16>
}
// CHECK-LABEL: sp.entry @qkv(@x) -> (@j)
// CHECK:      sp.program @q op "tg.head_slice" kind map {{.*}}head_slice = "columns 0..64 of @x: from tile 0"
// CHECK:        sp.load @x[r0, c0] x [h, w] -> %in0
// CHECK:        sp.map copy %in0 [full] -> %out valid 40x64
// CHECK:      sp.program @k op "tg.head_slice" kind map {{.*}}head_slice = "columns 64..136 of @x: from tile 2"
// CHECK:        sp.load @x[r0, c0 + 2] x [h, w] -> %in0
// CHECK:        sp.store %out -> @k[r0 + ti, c0 + tj] x [sh, sw]
// CHECK:      sp.program @j op "tg.join" kind map {{.*}}join = "part 0: columns 0..64 of @j"
// CHECK:        sp.load @q[r0, c0] x [h, w] -> %in0
// CHECK:        sp.store %out -> @j[r0 + ti, c0 + tj] x [sh, sw]
// CHECK:      sp.program @j_1 op "tg.join" kind map {{.*}}join = "part 1: columns 64..136 of @j"
// CHECK:        sp.map copy %in0 [full] -> %out valid 40x72
// CHECK:        sp.store %out -> @j[r0 + ti, c0 + 2 + tj] x [sh, sw]
// The items of a join's part cut the part (2x3 tiles), not the result (2x5).
// PLAN-LABEL: sp.program @j_1
// PLAN:         sp.work @k block

// -----

func.func @per_head(%a: tensor<8x128xf32>, %b: tensor<128x64xf32>) -> tensor<8x256xf32> {
  %m = tg.head_matmul %a, %b heads 4 : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x256xf32>
  func.return %m : tensor<8x256xf32>
}
// CHECK-LABEL: sp.entry @per_head(@a, @b) -> (@m)
// CHECK:      sp.program @m__a0 op "tg.head_matmul" kind map
// CHECK:        sp.load @a[r0, c0] x [h, w] -> %in0
// CHECK:      sp.program @m__b0 op "tg.head_matmul" kind map
// CHECK:        sp.load @b[r0, c0] x [h, w] -> %in0
// CHECK:      sp.program @m__c0 op "tg.head_matmul" kind gemm
// CHECK:        sp.matmul_tiles
// CHECK:      sp.program @m__a1 op "tg.head_matmul" kind map
// CHECK:        sp.load @a[r0, c0 + 1] x [h, w] -> %in0
// CHECK:      sp.program @m__b1 op "tg.head_matmul" kind map
// CHECK:        sp.load @b[r0 + 1, c0] x [h, w] -> %in0
// CHECK:      sp.program @m op "tg.head_matmul" kind map {{.*}}join = "part 0: columns 0..64 of @m"
// CHECK:      sp.program @m_3 op "tg.head_matmul" kind map {{.*}}join = "part 3: columns 192..256 of @m"
// CHECK:        sp.load @m__c3[r0, c0] x [h, w] -> %in0
// CHECK:        sp.store %out -> @m[r0 + ti, c0 + 6 + tj] x [sh, sw]

// -----

func.func @unaligned_slice(%x: tensor<4x96xf32>) -> tensor<4x16xf32> {
  %q = tg.head_slice %x head_dim 16 first 1 heads 1 : (tensor<4x96xf32>) -> tensor<4x16xf32>
  func.return %q : tensor<4x16xf32>
}
// CHECK: error: NotLowered: tg.head_slice: the slice starts at column 16, not on a tile column (tiles are 32 wide); only whole-tile offsets have a section form

// -----

func.func @unaligned_join(%a: tensor<4x16xf32>, %b: tensor<4x32xf32>) -> tensor<4x48xf32> {
  %j = tg.join %a, %b : (tensor<4x16xf32>, tensor<4x32xf32>) -> tensor<4x48xf32>
  func.return %j : tensor<4x48xf32>
}
// CHECK: error: NotLowered: tg.join: part 0 is 4x16, not whole tiles wide (tiles are 32 wide); only the last part may end inside a tile

// -----

func.func @unaligned_heads(%a: tensor<4x32xf32>, %b: tensor<32x32xf32>) -> tensor<4x64xf32> {
  %m = tg.head_matmul %a, %b heads 2 : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x64xf32>
  func.return %m : tensor<4x64xf32>
}
// CHECK: error: NotLowered: tg.head_matmul: a head's K of 16 is not whole 32x32 tiles; only whole-tile head blocks have a section form

// -----

func.func @integer_head_matmul(%a: tensor<4x64xi8>, %b: tensor<64x32xi8>) -> tensor<4x64xi32> {
  %m = tg.head_matmul %a, %b heads 2 : (tensor<4x64xi8>, tensor<64x32xi8>) -> tensor<4x64xi32>
  func.return %m : tensor<4x64xi32>
}
// CHECK: error: NotLowered: tg.head_matmul: an integer head_matmul has no section form yet
