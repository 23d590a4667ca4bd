;; Batched matrix product C[b] = op(A[b]) · op(B[b]) with 128-bit SIMD, for the WASM backend's BatchMatMul
;; when the batch is larger than 1 or an operand is transposed — the cases tfjs-backend-wasm 4.22 sends to
;; a scalar loop that reaches ≈ 1–1.7 GFLOP/s on the attention's shapes (head width 16: short inner loops).
;; The module imports the backend's own memory, so it reads the tensors where they lie and writes the
;; output in place: no copies in or out.
;;
;; Per batch: op(B) is packed row-major into `pack` as [k, n8] (n8 = n rounded up to 8, zero-padded), so
;; every operand layout reads the same way; then a 4×8 register tile (4 rows of C, 8 columns in two vectors)
;; accumulates over k: per k, two vector loads of B, four scalar loads of A broadcast, 8 multiply-adds.
;; Rows left over (m mod 4) use a 1×8 tile; columns past n are computed on the padding and not stored.
;; The sum over k runs in blocks of 48 added in turn, as the backend's loop adds them (kBlockSize 48,
;; one float accumulator per block, no fused multiply-add in WASM): every output is bit for bit what the
;; backend computed, so training runs measured before this kernel replay exactly.
;; Strides are in elements; A[b][i, kk] = a[b·aBatch + i·aRs + kk·aKs], op(B)[b][kk, j] = b[b·bBatch +
;; kk·bKs + j·bJs]; C is contiguous [batch, m, n]. A stride of 0 broadcasts.
(module
  (import "env" "memory" (memory 1))

  ;; Stores the first `count` (1..7) floats of v0:v1 at p.
  (func $storePartial (param $p i32) (param $v0 v128) (param $v1 v128) (param $count i32)
    (f32.store (local.get $p) (f32x4.extract_lane 0 (local.get $v0)))
    (if (i32.le_u (local.get $count) (i32.const 1)) (then (return)))
    (f32.store offset=4 (local.get $p) (f32x4.extract_lane 1 (local.get $v0)))
    (if (i32.le_u (local.get $count) (i32.const 2)) (then (return)))
    (f32.store offset=8 (local.get $p) (f32x4.extract_lane 2 (local.get $v0)))
    (if (i32.le_u (local.get $count) (i32.const 3)) (then (return)))
    (f32.store offset=12 (local.get $p) (f32x4.extract_lane 3 (local.get $v0)))
    (if (i32.le_u (local.get $count) (i32.const 4)) (then (return)))
    (f32.store offset=16 (local.get $p) (f32x4.extract_lane 0 (local.get $v1)))
    (if (i32.le_u (local.get $count) (i32.const 5)) (then (return)))
    (f32.store offset=20 (local.get $p) (f32x4.extract_lane 1 (local.get $v1)))
    (if (i32.le_u (local.get $count) (i32.const 6)) (then (return)))
    (f32.store offset=24 (local.get $p) (f32x4.extract_lane 2 (local.get $v1))))

  ;; Stores one 8-wide row segment: whole when 8 or more columns remain, else the first `count`.
  (func $storeRow (param $p i32) (param $v0 v128) (param $v1 v128) (param $count i32)
    (if (i32.ge_u (local.get $count) (i32.const 8))
      (then
        (v128.store (local.get $p) (local.get $v0))
        (v128.store offset=16 (local.get $p) (local.get $v1)))
      (else (call $storePartial (local.get $p) (local.get $v0) (local.get $v1) (local.get $count)))))

;; The tile's totals (4 rows × 8 floats at t) to zero.
  (func $zeroTile (param $t i32)
    (v128.store (local.get $t) (v128.const i32x4 0 0 0 0)) (v128.store offset=16 (local.get $t) (v128.const i32x4 0 0 0 0))
    (v128.store offset=32 (local.get $t) (v128.const i32x4 0 0 0 0)) (v128.store offset=48 (local.get $t) (v128.const i32x4 0 0 0 0))
    (v128.store offset=64 (local.get $t) (v128.const i32x4 0 0 0 0)) (v128.store offset=80 (local.get $t) (v128.const i32x4 0 0 0 0))
    (v128.store offset=96 (local.get $t) (v128.const i32x4 0 0 0 0)) (v128.store offset=112 (local.get $t) (v128.const i32x4 0 0 0 0)))

  ;; One row of the tile's totals (at t + row) += v0:v1.
  (func $addToTile (param $t i32) (param $row i32) (param $v0 v128) (param $v1 v128)
    (local $p i32)
    (local.set $p (i32.add (local.get $t) (local.get $row)))
    (v128.store (local.get $p) (f32x4.add (v128.load (local.get $p)) (local.get $v0)))
    (v128.store offset=16 (local.get $p) (f32x4.add (v128.load offset=16 (local.get $p)) (local.get $v1))))

  ;; op(B)[b] → pack as [k, n8], zero-padded past n.
  (func $pack (param $src i32) (param $dst i32) (param $n i32) (param $k i32) (param $bKs i32) (param $bJs i32)
    (local $kk i32) (local $j i32) (local $from i32) (local $n8 i32) (local $jStep i32)
    (local.set $n8 (i32.and (i32.add (local.get $n) (i32.const 7)) (i32.const -8)))
    (local.set $jStep (i32.shl (local.get $bJs) (i32.const 2)))
    (local.set $kk (i32.const 0))
    (block $kDone
      (loop $kLoop
        (br_if $kDone (i32.ge_u (local.get $kk) (local.get $k)))
        (local.set $from (i32.add (local.get $src) (i32.shl (i32.mul (local.get $kk) (local.get $bKs)) (i32.const 2))))
        (local.set $j (i32.const 0))
        (block $jDone
          (loop $jLoop
            (br_if $jDone (i32.ge_u (local.get $j) (local.get $n)))
            (f32.store (local.get $dst) (f32.load (local.get $from)))
            (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
            (local.set $from (i32.add (local.get $from) (local.get $jStep)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $jLoop)))
        (block $padDone
          (loop $padLoop
            (br_if $padDone (i32.ge_u (local.get $j) (local.get $n8)))
            (f32.store (local.get $dst) (f32.const 0))
            (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $padLoop)))
        (local.set $kk (i32.add (local.get $kk) (i32.const 1)))
        (br $kLoop))))

  (func (export "bmm")
    (param $a i32) (param $b i32) (param $c i32) (param $packed i32)
    (param $batch i32) (param $m i32) (param $n i32) (param $k i32)
    (param $aBatch i32) (param $aRs i32) (param $aKs i32)
    (param $bBatch i32) (param $bKs i32) (param $bJs i32)
    (local $bi i32) (local $i i32) (local $j i32) (local $kk i32) (local $n8 i32)
    (local $aBase i32) (local $cBase i32) (local $pp i32) (local $cRow i32) (local $rowBytes i32)
    (local $a0 i32) (local $a1 i32) (local $a2 i32) (local $a3 i32) (local $aStep i32) (local $aRowBytes i32) (local $ppStep i32)
    (local $s v128) (local $b0 v128) (local $b1 v128)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128)
    (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local $kLeft i32) (local $tile i32)
    (local.set $n8 (i32.and (i32.add (local.get $n) (i32.const 7)) (i32.const -8)))
    (local.set $aStep (i32.shl (local.get $aKs) (i32.const 2)))
    (local.set $aRowBytes (i32.shl (local.get $aRs) (i32.const 2)))
    (local.set $ppStep (i32.shl (local.get $n8) (i32.const 2)))
    (local.set $rowBytes (i32.shl (local.get $n) (i32.const 2)))
    ;; the 4×8 tile's running totals live right after the packed B
    (local.set $tile (i32.add (local.get $packed) (i32.mul (local.get $k) (local.get $ppStep))))
    (local.set $bi (i32.const 0))
    (block $batchDone
      (loop $batchLoop
        (br_if $batchDone (i32.ge_u (local.get $bi) (local.get $batch)))
        (call $pack
          (i32.add (local.get $b) (i32.shl (i32.mul (local.get $bi) (local.get $bBatch)) (i32.const 2)))
          (local.get $packed) (local.get $n) (local.get $k) (local.get $bKs) (local.get $bJs))
        (local.set $aBase (i32.add (local.get $a) (i32.shl (i32.mul (local.get $bi) (local.get $aBatch)) (i32.const 2))))
        (local.set $cBase (i32.add (local.get $c) (i32.shl (i32.mul (i32.mul (local.get $bi) (local.get $m)) (local.get $n)) (i32.const 2))))
        ;; 4-row tiles
        (local.set $i (i32.const 0))
        (block $rows4Done
          (loop $rows4
            (br_if $rows4Done (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $m)))
            (local.set $j (i32.const 0))
            (block $cols4Done
              (loop $cols4
                (br_if $cols4Done (i32.ge_u (local.get $j) (local.get $n)))
                (local.set $c00 (v128.const i32x4 0 0 0 0)) (local.set $c01 (v128.const i32x4 0 0 0 0))
                (local.set $c10 (v128.const i32x4 0 0 0 0)) (local.set $c11 (v128.const i32x4 0 0 0 0))
                (local.set $c20 (v128.const i32x4 0 0 0 0)) (local.set $c21 (v128.const i32x4 0 0 0 0))
                (local.set $c30 (v128.const i32x4 0 0 0 0)) (local.set $c31 (v128.const i32x4 0 0 0 0))
                (local.set $a0 (i32.add (local.get $aBase) (i32.mul (local.get $i) (local.get $aRowBytes))))
                (local.set $a1 (i32.add (local.get $a0) (local.get $aRowBytes)))
                (local.set $a2 (i32.add (local.get $a1) (local.get $aRowBytes)))
                (local.set $a3 (i32.add (local.get $a2) (local.get $aRowBytes)))
                (local.set $pp (i32.add (local.get $packed) (i32.shl (local.get $j) (i32.const 2))))
                (call $zeroTile (local.get $tile))
                (local.set $kLeft (local.get $k))
                (block $blocks4Done
                  (loop $blocks4
                    (br_if $blocks4Done (i32.eqz (local.get $kLeft)))
                    (local.set $kk (select (i32.const 48) (local.get $kLeft) (i32.gt_u (local.get $kLeft) (i32.const 48))))
                    (local.set $kLeft (i32.sub (local.get $kLeft) (local.get $kk)))
                    (local.set $c00 (v128.const i32x4 0 0 0 0)) (local.set $c01 (v128.const i32x4 0 0 0 0))
                    (local.set $c10 (v128.const i32x4 0 0 0 0)) (local.set $c11 (v128.const i32x4 0 0 0 0))
                    (local.set $c20 (v128.const i32x4 0 0 0 0)) (local.set $c21 (v128.const i32x4 0 0 0 0))
                    (local.set $c30 (v128.const i32x4 0 0 0 0)) (local.set $c31 (v128.const i32x4 0 0 0 0))
                    (loop $k4
                      (local.set $b0 (v128.load (local.get $pp)))
                      (local.set $b1 (v128.load offset=16 (local.get $pp)))
                      (local.set $s (f32x4.splat (f32.load (local.get $a0))))
                      (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $s) (local.get $b0))))
                      (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $s) (local.get $b1))))
                      (local.set $s (f32x4.splat (f32.load (local.get $a1))))
                      (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $s) (local.get $b0))))
                      (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $s) (local.get $b1))))
                      (local.set $s (f32x4.splat (f32.load (local.get $a2))))
                      (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $s) (local.get $b0))))
                      (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $s) (local.get $b1))))
                      (local.set $s (f32x4.splat (f32.load (local.get $a3))))
                      (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $s) (local.get $b0))))
                      (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $s) (local.get $b1))))
                      (local.set $a0 (i32.add (local.get $a0) (local.get $aStep)))
                      (local.set $a1 (i32.add (local.get $a1) (local.get $aStep)))
                      (local.set $a2 (i32.add (local.get $a2) (local.get $aStep)))
                      (local.set $a3 (i32.add (local.get $a3) (local.get $aStep)))
                      (local.set $pp (i32.add (local.get $pp) (local.get $ppStep)))
                      (local.set $kk (i32.sub (local.get $kk) (i32.const 1)))
                      (br_if $k4 (local.get $kk)))
                    (call $addToTile (local.get $tile) (i32.const 0) (local.get $c00) (local.get $c01))
                    (call $addToTile (local.get $tile) (i32.const 32) (local.get $c10) (local.get $c11))
                    (call $addToTile (local.get $tile) (i32.const 64) (local.get $c20) (local.get $c21))
                    (call $addToTile (local.get $tile) (i32.const 96) (local.get $c30) (local.get $c31))
                    (br $blocks4)))
                (local.set $cRow (i32.add (local.get $cBase) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $n)) (local.get $j)) (i32.const 2))))
                (call $storeRow (local.get $cRow) (v128.load offset=0 (local.get $tile)) (v128.load offset=16 (local.get $tile)) (i32.sub (local.get $n) (local.get $j)))
                (local.set $cRow (i32.add (local.get $cRow) (local.get $rowBytes)))
                (call $storeRow (local.get $cRow) (v128.load offset=32 (local.get $tile)) (v128.load offset=48 (local.get $tile)) (i32.sub (local.get $n) (local.get $j)))
                (local.set $cRow (i32.add (local.get $cRow) (local.get $rowBytes)))
                (call $storeRow (local.get $cRow) (v128.load offset=64 (local.get $tile)) (v128.load offset=80 (local.get $tile)) (i32.sub (local.get $n) (local.get $j)))
                (local.set $cRow (i32.add (local.get $cRow) (local.get $rowBytes)))
                (call $storeRow (local.get $cRow) (v128.load offset=96 (local.get $tile)) (v128.load offset=112 (local.get $tile)) (i32.sub (local.get $n) (local.get $j)))
                (local.set $j (i32.add (local.get $j) (i32.const 8)))
                (br $cols4)))
            (local.set $i (i32.add (local.get $i) (i32.const 4)))
            (br $rows4)))
        ;; the rows left over, one at a time
        (block $rows1Done
          (loop $rows1
            (br_if $rows1Done (i32.ge_u (local.get $i) (local.get $m)))
            (local.set $j (i32.const 0))
            (block $cols1Done
              (loop $cols1
                (br_if $cols1Done (i32.ge_u (local.get $j) (local.get $n)))
                (local.set $c00 (v128.const i32x4 0 0 0 0)) (local.set $c01 (v128.const i32x4 0 0 0 0))
                (local.set $a0 (i32.add (local.get $aBase) (i32.mul (local.get $i) (local.get $aRowBytes))))
                (local.set $pp (i32.add (local.get $packed) (i32.shl (local.get $j) (i32.const 2))))
                (call $zeroTile (local.get $tile))
                (local.set $kLeft (local.get $k))
                (block $blocks1Done
                  (loop $blocks1
                    (br_if $blocks1Done (i32.eqz (local.get $kLeft)))
                    (local.set $kk (select (i32.const 48) (local.get $kLeft) (i32.gt_u (local.get $kLeft) (i32.const 48))))
                    (local.set $kLeft (i32.sub (local.get $kLeft) (local.get $kk)))
                    (local.set $c00 (v128.const i32x4 0 0 0 0)) (local.set $c01 (v128.const i32x4 0 0 0 0))
                    (loop $k1
                      (local.set $s (f32x4.splat (f32.load (local.get $a0))))
                      (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $s) (v128.load (local.get $pp)))))
                      (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $s) (v128.load offset=16 (local.get $pp)))))
                      (local.set $a0 (i32.add (local.get $a0) (local.get $aStep)))
                      (local.set $pp (i32.add (local.get $pp) (local.get $ppStep)))
                      (local.set $kk (i32.sub (local.get $kk) (i32.const 1)))
                      (br_if $k1 (local.get $kk)))
                    (call $addToTile (local.get $tile) (i32.const 0) (local.get $c00) (local.get $c01))
                    (br $blocks1)))
                (call $storeRow
                  (i32.add (local.get $cBase) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $n)) (local.get $j)) (i32.const 2)))
                  (v128.load (local.get $tile)) (v128.load offset=16 (local.get $tile)) (i32.sub (local.get $n) (local.get $j)))
                (local.set $j (i32.add (local.get $j) (i32.const 8)))
                (br $cols1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $rows1)))
        (local.set $bi (i32.add (local.get $bi) (i32.const 1)))
        (br $batchLoop)))))
