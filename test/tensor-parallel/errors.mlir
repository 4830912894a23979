// A bad mesh option is one line on stderr and exit 1: an unknown preset names the presets, a
// missing one says how to give it, an unknown option names the option.
// RUN: not spatial-opt %s -p 'tensor-parallel{mesh=n301}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not spatial-opt %s -p 'tensor-parallel' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not spatial-opt %s -p 'tensor-parallel{mesh=n300 chips=2}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not spatial-opt %s -p 'tensor-parallel{mesh=n300 prefer-sharded=maybe}' 2>&1 | filecheck %s --check-prefix=BOOL
// RUN: not spatial-opt %s -p 'tensor-parallel{mesh=n300 distributed-norm=always}' 2>&1 | filecheck %s --check-prefix=NORM

func.func @f(%x: tensor<1x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<1x64xbf16> {
  %y = tg.matmul %x, %w : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  func.return %y : tensor<1x64xbf16>
}
// UNKNOWN: spatial-opt: error: tensor-parallel: unknown mesh 'n301' (known: n300, t3k, galaxy, p150x4, h100x2, h100x8, h200x8)
// UNKNOWN-NOT: Traceback
// MISSING: spatial-opt: error: tensor-parallel: give mesh=PRESET (one of n300, t3k, galaxy, p150x4, h100x2, h100x8, h200x8)
// OPTION: spatial-opt: error: Provided arguments ["chips"] not found in expected arguments ["mesh", "prefer_sharded", "dram_mem", "distributed_norm"]
// BOOL: spatial-opt: error: tensor-parallel: option prefer-sharded expects <class 'bool'>, got 'maybe'
// NORM: spatial-opt: error: tensor-parallel: distributed-norm='always' is not one of off, priced, forced
// NORM-NOT: Traceback
