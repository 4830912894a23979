// link: a tg.matmul_q8_0 is one GEMM section whose weight stays Q8_0 (one sp.tensor stored
// q8_0_kn, naming its scales argument); each target's compute is decided once and recorded on the
// section (`q8_0`); an activation read through a Q8_0 view gets ONE view per value, made before
// its first reader and shared by every later one.
// RUN: spatial-opt %s -p 'link{target=wormhole_n150}' | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s -p 'link{target=h100}' | filecheck %s --check-prefix=GPU
// RUN: sed 's/bf16/f32/g' %s | spatial-opt -p 'link{target=plasticine}' | filecheck %s --check-prefix=RDU
// The whole pipeline takes it on every target.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150}' | filecheck %s --check-prefix=SIZED
// RUN: spatial-opt %s -p 'spatial-pipeline{target=rtx3060}' | filecheck %s --check-prefix=SIZED
// accumulate=bf16 narrows Tensix's accumulator of the widened tiles; the int8 dot keeps its f32.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 accumulate=bf16}' | filecheck %s --check-prefix=WH16
// RUN: spatial-opt %s -p 'spatial-pipeline{target=h100 accumulate=bf16}' | filecheck %s --check-prefix=GPU16

func.func @qkv(%x: tensor<1x128xbf16>, %wv: tensor<128x96xi8>, %ws: tensor<4x96xf16>, %uv: tensor<128x64xi8>, %us: tensor<4x64xf16>) -> (tensor<1x96xbf16>, tensor<1x64xbf16>, tensor<1x64xbf16>) {
  %y = tg.matmul_q8_0 %x, %wv, %ws activation "q8_0" : (tensor<1x128xbf16>, tensor<128x96xi8>, tensor<4x96xf16>) -> tensor<1x96xbf16>
  %z = tg.matmul_q8_0 %x, %uv, %us activation "q8_0" : (tensor<1x128xbf16>, tensor<128x64xi8>, tensor<4x64xf16>) -> tensor<1x64xbf16>
  %f = tg.matmul_q8_0 %x, %uv, %us activation "float" : (tensor<1x128xbf16>, tensor<128x64xi8>, tensor<4x64xf16>) -> tensor<1x64xbf16>
  func.return %y, %z, %f : tensor<1x96xbf16>, tensor<1x64xbf16>, tensor<1x64xbf16>
}

// The view of %x (a function argument: 0 writes before it), made once, before its first reader.
// WH:      sp.program @x__q8_0_0 op "quantize_q8_0" kind map
// WH-SAME:   q8_0_view = "@x after 0 write(s), read by Q8_0 products"
// WH-NEXT:   sp.tensor @x : tensor<1x128xbf16> tiles 1x4 input rows
// WH-NEXT:   sp.tensor @x__q8_0_0 : tensor<1x128xi8> tiles 1x4 scratch rows format "q8_0"
// WH-NEXT:   %in0 = sp.fifo "in0" depth 2 page [h, w] bf16 tile_bytes 2048
// WH-NEXT:   %out = sp.fifo "out" depth 2 page [sh, sw] i8 as "q8_0" tile_bytes 1088
// WH:        sp.map quantize_q8_0 %in0 [full] -> %out valid 1x128
// Tensix widens the blocks to bf16 in the compute stage, says why and that it stores them as
// bfp8_b; the widened tiles accumulate in f32 (the tg contract: dest in its fp32 mode).
// WH:      sp.program @y op "tg.matmul_q8_0" kind gemm
// WH-SAME:   q8_0 = "dequantize: dequantize to bf16 in the compute stage (64 cycles per tile): wormhole_n150's accumulator adds across K in place, with no per-block scale between tile products; stored as bfp8_b (34 bytes per 32 values), exact only for a block whose scale is a power of two"
// WH-NEXT:   sp.tensor @x__q8_0_0 : tensor<1x128xi8> tiles 1x4 input rows format "q8_0"
// WH-NEXT:   sp.tensor @wv : tensor<128x96xi8> tiles 4x3 input tiled format "q8_0_kn" scales @ws
// WH:        %in0 = sp.fifo "in0" depth 2 page [h, kw] i8 as "q8_0" tile_bytes 1088
// WH-NEXT:   %in1 = sp.fifo "in1" depth 2 page [kw, w] i8 as "q8_0_kn" tile_bytes 1088
// WH:        %dst = sp.acc "dst" page [sh, sw] f32
// WH:        sp.matmul_tiles %in0, %in1 -> %out acc %dst dequantize bf16
// The second reader shares the view: no second quantize section.
// WH-NOT:  op "quantize_q8_0"
// WH:      sp.program @z op "tg.matmul_q8_0"
// WH-NEXT:   sp.tensor @x__q8_0_0 : tensor<1x128xi8> tiles 1x4 input rows format "q8_0"
// A product that reads its activation as it is takes no view.
// WH:      sp.program @f op "tg.matmul_q8_0"
// WH-SAME:   the activation is read as it is (no Q8_0 view)
// WH-NEXT:   sp.tensor @x : tensor<1x128xbf16> tiles 1x4 input rows
// WH:        %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// WH:        sp.matmul_tiles %in0, %in1 -> %out acc %dst dequantize bf16

// A GPU takes the int8 dot where there is a view: no dequantize, an f32 register accumulator.
// GPU:     sp.program @y op "tg.matmul_q8_0" kind gemm
// GPU-SAME:  q8_0 = "int8_dot: int8 dot of the Q8_0 view and weight, per-block scales into the f32 register accumulator (10 cycles per tile); runner-up: dequantize to bf16 in the compute stage (20 cycles per tile)"
// GPU:       %dst = sp.acc "dst" page [sh, sw] f32
// GPU-NEXT:  sp.load
// GPU:       sp.matmul_tiles %in0, %in1 -> %out acc %dst{{$}}
// GPU:     sp.program @f op "tg.matmul_q8_0"
// GPU:       sp.matmul_tiles %in0, %in1 -> %out acc %dst dequantize bf16

// Plasticine has no i8 datapath: it widens to f32.
// RDU:     sp.program @y op "tg.matmul_q8_0" kind gemm
// RDU-SAME:  q8_0 = "dequantize: dequantize to f32 in the compute stage (342 cycles per tile): plasticine has no i8 matrix path"
// RDU:       sp.matmul_tiles %in0, %in1 -> %out acc %dst dequantize f32

// SIZED:   sp.program @x__q8_0_0 op "quantize_q8_0" kind map phase sized
// SIZED:   sp.program @y op "tg.matmul_q8_0" kind gemm phase sized
// SIZED:     sp.tensor @wv : tensor<128x96xi8> tiles 4x3 input tiled format "q8_0_kn" scales @ws
// SIZED:   sp.program @f op "tg.matmul_q8_0" kind gemm phase sized

// WH16:    sp.program @y op "tg.matmul_q8_0"
// WH16:      %dst = sp.acc "dst" page [sh, sw] bf16
// (Split in K: Wormhole's two unpackers share 64 B/cycle, so the unsplit 1x1 plan's K loop costs more.)
// WH16:      sp.matmul_tiles %in0, %in1 -> %out acc %dst partials %partials dequantize bf16
// GPU16:   sp.program @y op "tg.matmul_q8_0"
// GPU16:     %dst = sp.acc "dst" page [sh, sw] f32
// GPU16:     sp.matmul_tiles %in0, %in1 -> %out acc %dst on compute
