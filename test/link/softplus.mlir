// The worked example of docs/extending.md: tg.softplus, added with one registration in each of
// seven files, links as the map kind of its own name and compiles through the whole pipeline on
// every kind of target; each backend prints it (every executor runs it in
// test/run/test_run_softplus.py).
// RUN: spatial-opt %s -p link | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang | filecheck %s --check-prefix=TTLANG
// RUN: spatial-opt %s -p 'spatial-pipeline{target=h100}' -t triton | filecheck %s --check-prefix=TRITON

func.func @softplus_step(%x: tensor<64x96xbf16>) -> tensor<64x96xbf16> {
  %y = tg.softplus %x : (tensor<64x96xbf16>) -> tensor<64x96xbf16>
  func.return %y : tensor<64x96xbf16>
}

// CHECK:      sp.program @y
// CHECK:        sp.map softplus %in0 [full] -> %out valid 64x96

// TTLANG:      # section @y: tg.softplus
// TTLANG:      ttl.math.relu([[X:i[0-9]+]])
// TTLANG-NEXT: + ttl.math.logp1(ttl.math.exp(ttl.math.neg(ttl.math.abs([[X]]))))

// TRITON: tl.maximum([[X:x[0-9]+]], 0.0) + tl.log(1.0 + tl.exp(-tl.abs([[X]])))
