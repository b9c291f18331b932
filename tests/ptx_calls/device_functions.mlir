// Device functions at the NVVM level: nested calls, a call under a divergent branch, a
// callee branching on a lane-varying parameter, i1 / f32 / i16 / vector
// parameters and return values. Each of the 64 threads writes four words of `out`:
//   out[4t+0] = clamp(square(x) + 3t, 100)         (nested calls; a branch in clamp)
//   out[4t+1] = t odd ? bits(scaled(x, 0.5)) : 7   (a call under a divergent branch, f32)
//   out[4t+2] = pick(t < 9, x, t) + widen(t)       (pick(p, a, b) = p ? 2a : b: i1 and i16 parameters)
//   out[4t+3] = sum4(vs[4t:4t+4])                  (a vector parameter: a .b8 byte array)
// tests/test_ptx_calls.py checks the words against numpy, our PTX and llc-22's PTX
// against the NVVM level.
module {
  llvm.func internal @square(%a: i32) -> i32 {
    %r = llvm.mul %a, %a : i32
    llvm.return %r : i32
  }
  llvm.func @clamp(%a: i32, %limit: i32) -> i32 {
    %big = llvm.icmp "sgt" %a, %limit : i32
    %r = scf.if %big -> (i32) {
      scf.yield %limit : i32
    } else {
      scf.yield %a : i32
    }
    llvm.return %r : i32
  }
  llvm.func @poly(%a: i32, %t: i32) -> i32 {
    %s = llvm.call @square(%a) : (i32) -> i32
    %three = llvm.mlir.constant(3 : i32) : i32
    %t3 = llvm.mul %t, %three : i32
    %sum = llvm.add %s, %t3 : i32
    %limit = llvm.mlir.constant(100 : i32) : i32
    %c = llvm.call @clamp(%sum, %limit) : (i32, i32) -> i32
    llvm.return %c : i32
  }
  llvm.func @scaled(%a: i32, %f: f32) -> f32 {
    %x = llvm.sitofp %a : i32 to f32
    %y = llvm.fmul %x, %f : f32
    llvm.return %y : f32
  }
  llvm.func @pick(%p: i1, %a: i32, %b: i32) -> i32 {
    %a2 = llvm.add %a, %a : i32
    %r = llvm.select %p, %a2, %b : i1, i32
    llvm.return %r : i32
  }
  llvm.func @widen(%h: i16) -> i32 {
    %r = llvm.sext %h : i16 to i32
    llvm.return %r : i32
  }
  llvm.func @sum4(%v: vector<4xi32>) -> i32 {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %c2 = llvm.mlir.constant(2 : i32) : i32
    %c3 = llvm.mlir.constant(3 : i32) : i32
    %e0 = llvm.extractelement %v[%c0 : i32] : vector<4xi32>
    %e1 = llvm.extractelement %v[%c1 : i32] : vector<4xi32>
    %e2 = llvm.extractelement %v[%c2 : i32] : vector<4xi32>
    %e3 = llvm.extractelement %v[%c3 : i32] : vector<4xi32>
    %s0 = llvm.add %e0, %e1 : i32
    %s1 = llvm.add %e2, %e3 : i32
    %s = llvm.add %s0, %s1 : i32
    llvm.return %s : i32
  }
  llvm.func @device_functions(%out: !llvm.ptr<1>, %xs: !llvm.ptr<1>, %vs: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %t = nvvm.read.ptx.sreg.tid.x : i32
    %px = llvm.getelementptr %xs[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    %x = llvm.load %px : !llvm.ptr<1> -> i32
    %four = llvm.mlir.constant(4 : i32) : i32
    %base = llvm.mul %t, %four : i32
    %p0 = llvm.getelementptr %out[%base] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    %w0 = llvm.call @poly(%x, %t) : (i32, i32) -> i32
    llvm.store %w0, %p0 : i32, !llvm.ptr<1>
    %p1 = llvm.getelementptr %p0[1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
    %seven = llvm.mlir.constant(7 : i32) : i32
    llvm.store %seven, %p1 : i32, !llvm.ptr<1>
    %one = llvm.mlir.constant(1 : i32) : i32
    %bit = llvm.and %t, %one : i32
    %odd = llvm.icmp "ne" %bit, %one : i32
    scf.if %odd {
    } else {
      %half = llvm.mlir.constant(0.5 : f32) : f32
      %f = llvm.call @scaled(%x, %half) : (i32, f32) -> f32
      llvm.store %f, %p1 : f32, !llvm.ptr<1>
    }
    %nine = llvm.mlir.constant(9 : i32) : i32
    %small = llvm.icmp "slt" %t, %nine : i32
    %picked = llvm.call @pick(%small, %x, %t) : (i1, i32, i32) -> i32
    %h = llvm.trunc %t : i32 to i16
    %wide = llvm.call @widen(%h) : (i16) -> i32
    %w2 = llvm.add %picked, %wide : i32
    %p2 = llvm.getelementptr %p0[2] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
    llvm.store %w2, %p2 : i32, !llvm.ptr<1>
    %pv = llvm.getelementptr %vs[%base] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    %v = llvm.load %pv : !llvm.ptr<1> -> vector<4xi32>
    %w3 = llvm.call @sum4(%v) : (vector<4xi32>) -> i32
    %p3 = llvm.getelementptr %p0[3] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
    llvm.store %w3, %p3 : i32, !llvm.ptr<1>
    llvm.return
  }
}
