//! End to end, source to interpreter: row and column reductions
//! (`reduce_rows.tc`, `reduce_cols.tc`), sum and max, f32 / f16 / int, on
//! ragged shapes whose edges only the masks handle, checked exactly against
//! Rust (sums use values whose partial sums are exact in any order).

mod e2e_util;

use e2e_util::*;
use half::f16;
use tritonc::interp::Memory;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Op {
    Sum,
    Max,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Axis {
    /// `Y[i] = OP_j X[i, j]` (reduce_rows.tc)
    Rows,
    /// `Y[j] = OP_i X[i, j]` (reduce_cols.tc)
    Cols,
}

/// A value that would change any sum or max it leaked into.
fn poison<T: Num>() -> T {
    T::from_f64(match T::C_TYPE {
        "half" => 60000.0,
        "int" => 1e9,
        _ => 1e30,
    })
}

fn reference<T: Num>(op: Op, values: impl Iterator<Item = T>) -> T {
    let values: Vec<f64> = values.map(|v| v.to_f64()).collect();
    T::from_f64(match op {
        Op::Sum => values.iter().sum(),
        Op::Max => values.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// Reduces an M x N row-major X (leading dimension `ldx`, padding full of
/// poison) along `axis`; checks all outputs and that the sentinels after
/// them (reachable by the last program's lanes) stay unwritten.
fn check<T: Num>(axis: Axis, op: Op, (tm, tn): (usize, usize), (m, n, ldx): (usize, usize, usize)) {
    let file = match axis {
        Axis::Rows => "reduce_rows.tc",
        Axis::Cols => "reduce_cols.tc",
    };
    let (tm_text, tn_text) = (tm.to_string(), tn.to_string());
    let acc = if T::C_TYPE == "int" { "int" } else { "float" };
    let mut defines = vec![
        ("TYPE", T::C_TYPE),
        ("ACC", acc),
        ("TM", &tm_text),
        ("TN", &tn_text),
    ];
    if op == Op::Max {
        defines.push(("USE_MAX", "1"));
        if T::C_TYPE == "int" {
            // The default identity is a float (-3e38f): out of range for int,
            // which C leaves undefined; name INT_MIN instead.
            defines.push(("IDENTITY", "(-2147483647 - 1)"));
        }
    }
    let k = Kernel::load(file, &defines);
    let what = format!("{} M={m} N={n} ldx={ldx}", k.what);
    let data: Vec<T> = match op {
        Op::Sum => quarters(m * ldx, 11),
        Op::Max => random(m * ldx, 12, 1000.0),
    };
    let x: Vec<T> = (0..m * ldx)
        .map(|at| if at % ldx < n { data[at] } else { poison() })
        .collect();
    let (outputs, tile, programs) = match axis {
        Axis::Rows => (m, tm, cdiv(m, tm)),
        Axis::Cols => (n, tn, cdiv(n, tn)),
    };
    let len = outputs + tile;
    let mut mem = Memory::new();
    let px = mem.alloc_slice(&x);
    let py = mem.alloc_slice(&vec![sentinel::<T>(); len]);
    k.run(
        [programs, 1, 1],
        &[ptr(px), ptr(py), int(m), int(n), int(ldx)],
        &mut mem,
    );
    let want: Vec<T> = (0..len)
        .map(|o| match (o < outputs, axis) {
            (false, _) => sentinel(),
            (true, Axis::Rows) => reference(op, (0..n).map(|j| x[o * ldx + j])),
            (true, Axis::Cols) => reference(op, (0..m).map(|i| x[i * ldx + o])),
        })
        .collect();
    assert_exact(&read(&mem, py, len), &want, &what);
}

/// (M, N, ldx): ragged edges on both axes, single rows and columns, whole
/// tiles, several chunks along the reduced axis, and strided rows.
const SHAPES: [(usize, usize, usize); 7] = [
    (37, 53, 53),
    (1, 70, 70),
    (70, 1, 1),
    (64, 64, 64),
    (33, 200, 200),
    (200, 33, 33),
    (37, 53, 61),
];

#[test]
fn row_sums() {
    for shape in SHAPES {
        check::<f32>(Axis::Rows, Op::Sum, (16, 32), shape);
        check::<f16>(Axis::Rows, Op::Sum, (8, 64), shape);
        check::<i32>(Axis::Rows, Op::Sum, (8, 32), shape);
    }
}

#[test]
fn row_maxima() {
    for shape in SHAPES {
        check::<f32>(Axis::Rows, Op::Max, (16, 32), shape);
        check::<f16>(Axis::Rows, Op::Max, (8, 64), shape);
        check::<i32>(Axis::Rows, Op::Max, (8, 32), shape);
    }
}

#[test]
fn column_sums() {
    for shape in SHAPES {
        check::<f32>(Axis::Cols, Op::Sum, (32, 16), shape);
        check::<f16>(Axis::Cols, Op::Sum, (64, 8), shape);
        check::<i32>(Axis::Cols, Op::Sum, (32, 8), shape);
    }
}

#[test]
fn column_maxima() {
    for shape in SHAPES {
        check::<f32>(Axis::Cols, Op::Max, (32, 16), shape);
        check::<f16>(Axis::Cols, Op::Max, (64, 8), shape);
        check::<i32>(Axis::Cols, Op::Max, (32, 8), shape);
    }
}

#[test]
fn negative_rows_reduce_to_their_max_not_to_the_padding() {
    // All values below zero: a masked lane that read as 0 instead of the
    // identity of max would win; it must not.
    let (m, n) = (5, 37);
    let x: Vec<f32> = (0..m * n).map(|i| -1.0 - i as f32).collect();
    let k = Kernel::load(
        "reduce_rows.tc",
        &[
            ("TYPE", "float"),
            ("TM", "8"),
            ("TN", "16"),
            ("USE_MAX", "1"),
        ],
    );
    let mut mem = Memory::new();
    let (px, py) = (mem.alloc_slice(&x), mem.alloc_slice(&vec![0f32; m]));
    k.run(
        [1, 1, 1],
        &[ptr(px), ptr(py), int(m), int(n), int(n)],
        &mut mem,
    );
    let want: Vec<f32> = (0..m).map(|i| -1.0 - (i * n) as f32).collect();
    assert_exact(&read(&mem, py, m), &want, "row max of negative values");
}
