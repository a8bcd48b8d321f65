;; The half-band filter (resample-halfband.ts) in WebAssembly SIMD. Its odd branch: for t < count,
;;   sums[t] = sum over k < 28 of taps[k] * input[t + k]
;; where taps are the 14 folded pairs unfolded into their 28 symmetric taps (zero-padded to 32); then the
;; outputs, rounded and saturated to 16 bits:
;;   upsample:  output[2t] = (sums[t] + 2^13) >> 14, output[2t + 1] = input[t + 14]
;;   decimate:  output[t] = (sums[t] + (centre[t] << 14) + 2^14) >> 15
;;
;; Memory (one page, never grown, so the JS views over it stay valid):
;;   bytes     0 .. 2159   input: Int16, the branch's history then the block (up to 1,052 samples, plus
;;                         slack the last group of loads may read past, multiplied by zero taps or unused)
;;   bytes  2176 .. 2239   taps: Int16 x 32, written once by the JS side
;;   bytes  4096 .. 8191   sums: Int32 x 1,024 (and 3 past them)
;;   bytes  8192 .. 10291  centre: Int16, the decimator's even-indexed history then the block's (up to 1,038,
;;                         plus slack)
;;   bytes 10496 .. 14607  output: Int16 x 2,048 (plus slack)
;;   bytes 14848 .. 18975  raw: Int16, the decimator's block as it came (up to 2,048, plus slack), which `split`
;;                         deals into the centre and branch inputs
;;
;; Each output is four i16x8 dot products (i32x4.dot_i16x8_s: pairs of 16 x 16-bit products summed into
;; 32-bit lanes, exact for these taps); four outputs' partial vectors are then reduced together by two rounds
;; of shuffles, so one 128-bit store writes four sums. All of it is written out in the loop body rather than in
;; helper functions: Node 20's V8 does not inline WebAssembly calls, and calls passing v128 values cost about a
;; third of the kernel's time. Like the scalar loop it replaces, the last group may compute up to 3 sums past
;; `count`, and the output loops up to 3 outputs past theirs, which are never read.
(module
  (memory (export "memory") 1 1)

  (func $branchSums (param $count i32)
    (local $t i32) (local $p i32)
    (local $h0 v128) (local $h1 v128) (local $h2 v128) (local $h3 v128)
    (local $a v128) (local $b v128) (local $c v128) (local $d v128)
    (local $s0 v128) (local $s1 v128)
    (local.set $h0 (v128.load offset=2176 (i32.const 0)))
    (local.set $h1 (v128.load offset=2192 (i32.const 0)))
    (local.set $h2 (v128.load offset=2208 (i32.const 0)))
    (local.set $h3 (v128.load offset=2224 (i32.const 0)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_s (local.get $t) (local.get $count)))
        (local.set $p (i32.shl (local.get $t) (i32.const 1)))
        ;; The four outputs' partial vectors: the lanes of each add up to its sum.
        (local.set $a
          (i32x4.add
            (i32x4.add
              (i32x4.dot_i16x8_s (v128.load offset=0 align=2 (local.get $p)) (local.get $h0))
              (i32x4.dot_i16x8_s (v128.load offset=16 align=2 (local.get $p)) (local.get $h1)))
            (i32x4.add
              (i32x4.dot_i16x8_s (v128.load offset=32 align=2 (local.get $p)) (local.get $h2))
              (i32x4.dot_i16x8_s (v128.load offset=48 align=2 (local.get $p)) (local.get $h3)))))
        (local.set $b
          (i32x4.add
            (i32x4.add
              (i32x4.dot_i16x8_s (v128.load offset=2 align=2 (local.get $p)) (local.get $h0))
              (i32x4.dot_i16x8_s (v128.load offset=18 align=2 (local.get $p)) (local.get $h1)))
            (i32x4.add
              (i32x4.dot_i16x8_s (v128.load offset=34 align=2 (local.get $p)) (local.get $h2))
              (i32x4.dot_i16x8_s (v128.load offset=50 align=2 (local.get $p)) (local.get $h3)))))
        (local.set $c
          (i32x4.add
            (i32x4.add
              (i32x4.dot_i16x8_s (v128.load offset=4 align=2 (local.get $p)) (local.get $h0))
              (i32x4.dot_i16x8_s (v128.load offset=20 align=2 (local.get $p)) (local.get $h1)))
            (i32x4.add
              (i32x4.dot_i16x8_s (v128.load offset=36 align=2 (local.get $p)) (local.get $h2))
              (i32x4.dot_i16x8_s (v128.load offset=52 align=2 (local.get $p)) (local.get $h3)))))
        (local.set $d
          (i32x4.add
            (i32x4.add
              (i32x4.dot_i16x8_s (v128.load offset=6 align=2 (local.get $p)) (local.get $h0))
              (i32x4.dot_i16x8_s (v128.load offset=22 align=2 (local.get $p)) (local.get $h1)))
            (i32x4.add
              (i32x4.dot_i16x8_s (v128.load offset=38 align=2 (local.get $p)) (local.get $h2))
              (i32x4.dot_i16x8_s (v128.load offset=54 align=2 (local.get $p)) (local.get $h3)))))
        ;; [a0 + a2, b0 + b2, a1 + a3, b1 + b3]: half of a's lane total and of b's, twice; likewise c and d.
        (local.set $s0
          (i32x4.add
            (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $a) (local.get $b))
            (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $a) (local.get $b))))
        (local.set $s1
          (i32x4.add
            (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $c) (local.get $d))
            (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $c) (local.get $d))))
        ;; s0 holds the first two outputs' halves as [A, B, A', B'], s1 the next two's as [C, D, C', D']:
        ;; lanes 0,1 of both plus lanes 2,3 of both are the four sums.
        (v128.store offset=4096 align=4
          (i32.shl (local.get $t) (i32.const 2))
          (i32x4.add
            (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $s0) (local.get $s1))
            (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $s0) (local.get $s1))))
        (local.set $t (i32.add (local.get $t) (i32.const 4)))
        (br $next))))

  ;; Upsampling by 2 of `count` inputs (at most 1,024): 2 x count outputs.
  (func (export "upsample") (param $count i32)
    (local $t i32)
    (call $branchSums (local.get $count))
    (block $done
      (loop $next
        (br_if $done (i32.ge_s (local.get $t) (local.get $count)))
        ;; Four branch outputs, saturated to 16 bits, interleaved with the four inputs they fall between.
        (v128.store offset=10496 align=2
          (i32.shl (local.get $t) (i32.const 2))
          (i8x16.shuffle 0 1 16 17 2 3 18 19 4 5 20 21 6 7 22 23
            (i16x8.narrow_i32x4_s
              (i32x4.shr_s
                (i32x4.add
                  (v128.load offset=4096 align=4 (i32.shl (local.get $t) (i32.const 2)))
                  (v128.const i32x4 8192 8192 8192 8192))
                (i32.const 14))
              (v128.const i32x4 0 0 0 0))
            (v128.load64_zero offset=28 align=2 (i32.shl (local.get $t) (i32.const 1)))))
        (local.set $t (i32.add (local.get $t) (i32.const 4)))
        (br $next))))

  ;; Decimation by 2: `count` outputs (at most 1,024) from the branch's input and the centre samples.
  (func (export "decimate") (param $count i32)
    (local $t i32)
    (call $branchSums (local.get $count))
    (block $done
      (loop $next
        (br_if $done (i32.ge_s (local.get $t) (local.get $count)))
        (v128.store64_lane offset=10496 align=2 0
          (i32.shl (local.get $t) (i32.const 1))
          (i16x8.narrow_i32x4_s
            (i32x4.shr_s
              (i32x4.add
                (i32x4.add
                  (v128.load offset=4096 align=4 (i32.shl (local.get $t) (i32.const 2)))
                  (i32x4.shl
                    (i32x4.extend_low_i16x8_s
                      (v128.load64_zero offset=8192 align=2 (i32.shl (local.get $t) (i32.const 1))))
                    (i32.const 14)))
                (v128.const i32x4 16384 16384 16384 16384))
              (i32.const 15))
            (v128.const i32x4 0 0 0 0)))
        (local.set $t (i32.add (local.get $t) (i32.const 4)))
        (br $next))))

  ;; The decimator's input pairs: raw[from + 2i] to centre[14 + i] and raw[from + 2i + 1] to input[28 + i], for
  ;; i < pairs, eight pairs a step (so up to 7 samples past each are written, into slack).
  (func (export "split") (param $from i32) (param $pairs i32)
    (local $i i32) (local $src i32) (local $a v128) (local $b v128)
    (local.set $src (i32.shl (local.get $from) (i32.const 1)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_s (local.get $i) (local.get $pairs)))
        (local.set $a (v128.load offset=14848 align=2 (local.get $src)))
        (local.set $b (v128.load offset=14864 align=2 (local.get $src)))
        (v128.store offset=8220 align=2 (i32.shl (local.get $i) (i32.const 1))
          (i8x16.shuffle 0 1 4 5 8 9 12 13 16 17 20 21 24 25 28 29 (local.get $a) (local.get $b)))
        (v128.store offset=56 align=2 (i32.shl (local.get $i) (i32.const 1))
          (i8x16.shuffle 2 3 6 7 10 11 14 15 18 19 22 23 26 27 30 31 (local.get $a) (local.get $b)))
        (local.set $src (i32.add (local.get $src) (i32.const 32)))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $next))))
)
