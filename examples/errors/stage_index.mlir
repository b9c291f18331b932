// A bad input for the README's "Tools": a stage index outside a 2-stage TmemStage.
// `xdsl-tmem-opt examples/errors/stage_index.mlir` reports it at the op, exit code 1.
func.func @epilogue(%base: i32) {
  %two = arith.constant 2 : i32
  %s = tmem.tmem_stage.create %base, %two : !tmem.tmem_stage<2, 256, 1>
  func.return
}
