// What a new user meets: each mistake is one clear message on stderr and exit status 1, never a
// Python traceback.
//
// RUN: not spatial-opt %S/Inputs/truncated.mlir 2>&1 | filecheck %s --check-prefix=TRUNC
// TRUNC-NOT: Traceback
// TRUNC: truncated.mlir:2:65: error: Expected shape type.
//
// RUN: not spatial-opt %s.does-not-exist 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING-NOT: Traceback
// MISSING: error: cannot open '{{.*}}user_errors.mlir.does-not-exist': no such file
//
// RUN: not spatial-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// PASS-NOT: Traceback
// PASS: error: Unrecognized passes: ['no-such-pass']
//
// RUN: not spatial-opt %s -p 'cse{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION-NOT: Traceback
// OPTION: error: {{.*}}"bogus"
//
// RUN: not spatial-opt %s -t no-such-target 2>&1 | filecheck %s --check-prefix=TARGET
// TARGET-NOT: Traceback
// TARGET: invalid choice: 'no-such-target'
//
// RUN: not spatial-opt %s --no-such-flag 2>&1 | filecheck %s --check-prefix=FLAG
// FLAG-NOT: Traceback
// FLAG: unrecognized arguments: --no-such-flag
//
// RUN: not spatial-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN-NOT: Traceback
// UNKNOWN: user_errors.mlir:33:18: error:
// UNKNOWN: Operation tg.matmull is not registered

%c = "tg.matmull"() : () -> ()

//
// RUN: not spatial-opt %S/Inputs/operand_count.mlir 2>&1 | filecheck %s --check-prefix=COUNT
// COUNT-NOT: Traceback
// COUNT: error: Expected 2 operands, but got 1
// COUNT: "tg.matmul"(%x)
//
// RUN: not spatial-opt %S/Inputs/property_type.mlir 2>&1 | filecheck %s --check-prefix=PROP
// PROP-NOT: Traceback
// PROP: error: tg.rms_norm: property eps must be an f32 float (e.g. 1.0e-06 : f32), got "small"
// PROP: "tg.rms_norm"(%x, %w)
