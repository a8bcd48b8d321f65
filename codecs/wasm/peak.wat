;; The largest magnitude among 16-bit samples (samplePeak in peak.ts), eight lanes at a time: the running
;; highest and lowest sample, each reduced across its lanes at the end; the peak is the larger of the highest
;; and minus the lowest (32768 for a sample of -32768).
;;
;; Memory (one page, never grown): the samples from byte 0, padded with zeros to a multiple of eight (zeros
;; change neither extreme, as both start at 0).
(module
  (memory (export "memory") 1 1)

  (func (export "peak") (param $bytes i32) (result i32)
    (local $p i32) (local $v v128) (local $high v128) (local $low v128) (local $h i32) (local $l i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $bytes)))
        (local.set $v (v128.load align=2 (local.get $p)))
        (local.set $high (i16x8.max_s (local.get $high) (local.get $v)))
        (local.set $low (i16x8.min_s (local.get $low) (local.get $v)))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $next)))
    ;; Halve the lanes three times: lanes 0-3 against 4-7, then 0-1 against 2-3, then 0 against 1.
    (local.set $high (i16x8.max_s (local.get $high)
      (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $high) (local.get $high))))
    (local.set $high (i16x8.max_s (local.get $high)
      (i8x16.shuffle 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 (local.get $high) (local.get $high))))
    (local.set $high (i16x8.max_s (local.get $high)
      (i8x16.shuffle 2 3 0 1 2 3 0 1 2 3 0 1 2 3 0 1 (local.get $high) (local.get $high))))
    (local.set $low (i16x8.min_s (local.get $low)
      (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $low) (local.get $low))))
    (local.set $low (i16x8.min_s (local.get $low)
      (i8x16.shuffle 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 (local.get $low) (local.get $low))))
    (local.set $low (i16x8.min_s (local.get $low)
      (i8x16.shuffle 2 3 0 1 2 3 0 1 2 3 0 1 2 3 0 1 (local.get $low) (local.get $low))))
    (local.set $h (i16x8.extract_lane_s 0 (local.get $high)))
    (local.set $l (i32.sub (i32.const 0) (i16x8.extract_lane_s 0 (local.get $low))))
    (select (local.get $h) (local.get $l) (i32.gt_s (local.get $h) (local.get $l)))))
