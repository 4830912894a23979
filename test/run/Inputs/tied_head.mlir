// A tied LM head: ONE embedding table [vocab, d] (300 rows: a partial edge tile), whose rows the
// gather reads and whose transpose the head multiplies by (transpose_b: the head reads the
// table's blocks transposed, no transposed copy, no transpose section). 40 rows of 8 K tiles.
func.func @tied(%table: tensor<300x256xbf16>, %ids: tensor<40xi32>) -> (tensor<40x256xbf16>, tensor<40x300xbf16>) {
  %e = tg.gather_rows %table, %ids : (tensor<300x256xbf16>, tensor<40xi32>) -> tensor<40x256xbf16>
  %y = tg.matmul %e, %table transpose_b true : (tensor<40x256xbf16>, tensor<300x256xbf16>) -> tensor<40x300xbf16>
  func.return %e, %y : tensor<40x256xbf16>, tensor<40x300xbf16>
}
