// A device function called before its definition: the backend declares it first (ptxas
// needs a callee declared before the call). tests/test_ptx_calls.py.
module {
  llvm.func @a(%x: i32) -> i32 {
    %y = llvm.call @b(%x) : (i32) -> i32
    llvm.return %y : i32
  }
  llvm.func @b(%x: i32) -> i32 {
    %y = llvm.add %x, %x : i32
    llvm.return %y : i32
  }
  llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %t = nvvm.read.ptx.sreg.tid.x : i32
    %r = llvm.call @a(%t) : (i32) -> i32
    %p = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    llvm.store %r, %p : i32, !llvm.ptr<1>
    llvm.return
  }
}
