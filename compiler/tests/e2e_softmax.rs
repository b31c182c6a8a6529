//! End to end, source to interpreter: row softmax (`softmax.tc`), f32 and f16,
//! with N not a power of two (masked columns), grids smaller than M (each
//! program walks rows with a stride of get_num_programs) and larger (idle
//! programs), and strided rows. Checked against an f64 Rust reference:
//! 1e-5 relative for f32, plus half an f16 ulp for f16 outputs.

mod e2e_util;

use e2e_util::*;
use half::f16;
use tritonc::interp::Memory;

/// A value that wrecks a row's softmax if a masked lane ever reads it.
fn poison<T: Num>() -> T {
    T::from_f64(if T::C_TYPE == "half" { 60000.0 } else { 1e30 })
}

fn reference_row(x: &[f64]) -> Vec<f64> {
    let max = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let num: Vec<f64> = x.iter().map(|v| (v - max).exp()).collect();
    let den: f64 = num.iter().sum();
    num.iter().map(|v| v / den).collect()
}

/// Softmax of every row of an M x N X (row stride `ldx`) into Y (row stride
/// `ldy`) on `programs` programs; every element of Y is checked, the stride
/// padding must keep its sentinels.
fn check<T: Num>(tn: usize, (m, n): (usize, usize), (ldx, ldy): (usize, usize), programs: u32) {
    let tn_text = tn.to_string();
    let k = Kernel::load("softmax.tc", &[("TYPE", T::C_TYPE), ("TN", &tn_text)]);
    let what = format!("{} M={m} N={n} ldx={ldx} ldy={ldy} grid={programs}", k.what);
    let data: Vec<T> = random(m * ldx, 21, 4.0);
    let x: Vec<T> = (0..m * ldx)
        .map(|at| if at % ldx < n { data[at] } else { poison() })
        .collect();
    let mut mem = Memory::new();
    let px = mem.alloc_slice(&x);
    let py = mem.alloc_slice(&vec![sentinel::<T>(); m * ldy]);
    let args = [ptr(py), ptr(px), int(ldx), int(ldy), int(m), int(n)];
    k.run([programs, 1, 1], &args, &mut mem);
    let mut want = vec![sentinel::<T>().to_f64(); m * ldy];
    for r in 0..m {
        let row: Vec<f64> = x[r * ldx..r * ldx + n].iter().map(|v| v.to_f64()).collect();
        want[r * ldy..r * ldy + n].copy_from_slice(&reference_row(&row));
    }
    let f16_out = T::C_TYPE == "half";
    let tol = |at: usize, w: f64| {
        if at % ldy >= n {
            0.0 // padding: the sentinel, exactly
        } else if f16_out {
            1e-5 * w.abs() + T::ulp(w) / 2.0
        } else {
            1e-5 * w.abs()
        }
    };
    assert_close(&read::<T>(&mem, py, m * ldy), &want, tol, &what);
}

#[test]
fn softmax_f32_ragged_columns() {
    // 781 columns in a tile of 1024: 243 masked lanes per row.
    check::<f32>(1024, (64, 781), (781, 781), 16);
    check::<f32>(1024, (64, 781), (781, 781), 100);
    check::<f32>(1024, (64, 781), (781, 781), 64);
    check::<f32>(1024, (5, 1), (1, 1), 2);
}

#[test]
fn softmax_f32_full_rows() {
    check::<f32>(1024, (33, 1024), (1024, 1024), 8);
    check::<f32>(1024, (33, 1024), (1024, 1024), 40);
}

#[test]
fn softmax_f32_strided() {
    check::<f32>(1024, (19, 781), (784, 790), 4);
    check::<f32>(4096, (7, 3000), (3003, 3010), 3);
}

#[test]
fn softmax_f16() {
    check::<f16>(1024, (64, 781), (781, 781), 16);
    check::<f16>(1024, (64, 781), (781, 781), 100);
    check::<f16>(1024, (33, 1024), (1024, 1024), 8);
    check::<f16>(1024, (33, 1024), (1024, 1024), 40);
    check::<f16>(1024, (19, 781), (790, 785), 5);
}
