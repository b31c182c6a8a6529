//! End to end, source to interpreter: vector addition (`add.tc`, and
//! `add_masked.tc` on sizes that are not a multiple of the tile) and the
//! matrix add / reduce / broadcast snippet (`matrix_ops.tc`), checked exactly.
//! Also proves that the masks matter: the unmasked kernel on a ragged size
//! is an interpreter error that points at the access.

mod e2e_util;

use e2e_util::*;
use half::f16;
use tritonc::interp::Memory;

/// Runs the `add` kernel of `file` on `n` elements with `size` lanes per
/// program; `c` starts as sentinels one tile past `n` (in bounds) so stray
/// stores show. Returns (a, b, c read back over `n + size`).
fn run_add<T: Num>(
    file: &str,
    size: usize,
    n: usize,
    buffer_len: usize,
) -> (Vec<T>, Vec<T>, Vec<T>) {
    let size_text = size.to_string();
    let k = Kernel::load(file, &[("TYPE", T::C_TYPE), ("SIZE", &size_text)]);
    let (a, b) = (
        random::<T>(buffer_len, 1, 100.0),
        random::<T>(buffer_len, 2, 100.0),
    );
    let mut mem = Memory::new();
    let (pa, pb) = (mem.alloc_slice(&a), mem.alloc_slice(&b));
    let pc = mem.alloc_slice(&vec![sentinel::<T>(); buffer_len]);
    k.run(
        [cdiv(n, size), 1, 1],
        &[int(n), ptr(pa), ptr(pb), ptr(pc)],
        &mut mem,
    );
    (a, b, read(&mem, pc, buffer_len))
}

/// The correctly rounded sum, what a GPU's add gives.
fn sum<T: Num>(a: T, b: T) -> T {
    T::from_f64(a.to_f64() + b.to_f64())
}

#[test]
fn add_f32_for_every_tile_size() {
    for size in [32, 64, 128, 256, 1024] {
        let n = 4 * 1024;
        let (a, b, c) = run_add::<f32>("add.tc", size, n, n);
        let want: Vec<f32> = (0..n).map(|i| sum(a[i], b[i])).collect();
        assert_exact(&c, &want, &format!("add.tc SIZE={size}"));
    }
}

#[test]
fn add_f16() {
    for size in [128, 1024] {
        let n = 2048;
        let (a, b, c) = run_add::<f16>("add.tc", size, n, n);
        let want: Vec<f16> = (0..n).map(|i| sum(a[i], b[i])).collect();
        assert_exact(&c, &want, &format!("add.tc half SIZE={size}"));
    }
}

/// The masked kernel on `n` elements: the first `n` are sums, the rest of the
/// buffer (in bounds, reachable by the last program's lanes) stays untouched.
fn check_masked_add<T: Num>(size: usize, n: usize) {
    let len = cdiv(n, size) as usize * size + 7;
    let (a, b, c) = run_add::<T>("add_masked.tc", size, n, len);
    let want: Vec<T> = (0..len)
        .map(|i| if i < n { sum(a[i], b[i]) } else { sentinel() })
        .collect();
    assert_exact(
        &c,
        &want,
        &format!("add_masked.tc {} SIZE={size} N={n}", T::C_TYPE),
    );
}

#[test]
fn masked_add_on_ragged_sizes() {
    for (size, n) in [
        (128, 1000),
        (128, 1),
        (128, 129),
        (1024, 1000),
        (1024, 3001),
        (128, 1024),
    ] {
        check_masked_add::<f32>(size, n);
        check_masked_add::<f16>(size, n);
    }
}

#[test]
fn masked_add_with_exact_buffers() {
    // Buffers of exactly N elements: any unmasked lane past N would fault.
    let (size, n) = (128, 1000);
    let k = Kernel::load("add_masked.tc", &[("TYPE", "float"), ("SIZE", "128")]);
    let (a, b) = (random::<f32>(n, 3, 1.0), random::<f32>(n, 4, 1.0));
    let mut mem = Memory::new();
    let (pa, pb, pc) = (
        mem.alloc_slice(&a),
        mem.alloc_slice(&b),
        mem.alloc_slice(&vec![0f32; n]),
    );
    k.run(
        [cdiv(n, size), 1, 1],
        &[int(n), ptr(pa), ptr(pb), ptr(pc)],
        &mut mem,
    );
    let want: Vec<f32> = (0..n).map(|i| a[i] + b[i]).collect();
    assert_exact(&read(&mem, pc, n), &want, "add_masked.tc exact buffers");
}

#[test]
fn unmasked_add_on_a_ragged_size_faults_at_the_access() {
    // add.tc has no mask: N = 1000 with SIZE = 128 makes the last program
    // touch elements 1000..1024, which no buffer holds.
    let (size, n) = (128, 1000);
    let k = Kernel::load("add.tc", &[("TYPE", "float"), ("SIZE", "128")]);
    let mut mem = Memory::new();
    let (pa, pb, pc) = (
        mem.alloc_slice(&vec![1f32; n]),
        mem.alloc_slice(&vec![2f32; n]),
        mem.alloc_slice(&vec![0f32; n]),
    );
    let err = k
        .try_run(
            [cdiv(n, size), 1, 1],
            &[int(n), ptr(pa), ptr(pb), ptr(pc)],
            &mut mem,
        )
        .expect_err("an unmasked access past the end must fail");
    assert!(
        err.message.contains("past the end") || err.message.contains("outside every buffer"),
        "{}",
        err.message
    );
    assert!(err.message.contains("program (7, 0, 0)"), "{}", err.message);
    let rendered = k.render(&err);
    assert!(rendered.contains("add.tc:10:"), "{rendered}");
    // Programs 0..7 ran before the fault and wrote their full tiles.
    let c: Vec<f32> = read(&mem, pc, n);
    assert!(c[..7 * size].iter().all(|&x| x == 3.0));
}

#[test]
#[allow(clippy::approx_constant)] // the seed's 3.14
fn matrix_ops_broadcasts_the_row_sums() {
    let k = Kernel::load("matrix_ops.tc", &[]);
    let mut mem = Memory::new();
    // One row of sentinels past the 16 x 32 output must stay untouched.
    let out = mem.alloc_slice(&vec![sentinel::<f32>(); 17 * 32]);
    k.run([1, 1, 1], &[ptr(out)], &mut mem);
    // z = 3.14f + 5.17f in f32; a sum of 8 equal values is 8 * z exactly.
    let z = 3.14f32 + 5.17f32;
    let mut want = vec![8.0 * z; 16 * 32];
    want.extend(vec![sentinel::<f32>(); 32]);
    assert_exact(&read::<f32>(&mem, out, 17 * 32), &want, "matrix_ops.tc");
}
