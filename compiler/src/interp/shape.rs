//! Ops that only move elements: `MakeRange`, `Splat`, `Broadcast`, `Reshape`, `Trans`.

use super::value::{strides, Data, Tile};

pub(crate) fn make_range(start: i64, end: i64, out_len: usize) -> Result<Data, String> {
    if end as i128 - start as i128 != out_len as i128 {
        return Err(format!(
            "range {start} ... {end} does not have the {out_len} elements of its type"
        ));
    }
    Ok(Data::Int((start..end).collect()))
}

pub(crate) fn splat(src: &Tile, out_len: usize) -> Result<Data, String> {
    if src.len() != 1 {
        return Err(format!("splat of {}, which is not a scalar", src.ty()));
    }
    Ok(src.data.repeat(0, out_len))
}

pub(crate) fn broadcast(src: &Tile, out_shape: &[usize]) -> Result<Data, String> {
    let bad = || {
        Err(format!(
            "cannot broadcast {} to shape {out_shape:?}: every axis must match or be 1",
            src.ty()
        ))
    };
    if src.shape.len() != out_shape.len() {
        return bad();
    }
    // Stride 0 along the axes that repeat.
    let mut step = strides(&src.shape);
    for (ax, (&from, &to)) in src.shape.iter().zip(out_shape).enumerate() {
        if from == 1 && to != 1 {
            step[ax] = 0;
        } else if from != to {
            return bad();
        }
    }
    Ok(src.data.gather(&strided_indices(out_shape, &step)))
}

/// Source index of every element of `shape` (row-major), given the source
/// offset one step along each axis moves.
fn strided_indices(shape: &[usize], step: &[usize]) -> Vec<usize> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut pos = vec![0usize; shape.len()];
    let mut offset = 0usize;
    for _ in 0..n {
        out.push(offset);
        // Odometer: bump the last axis, carry into earlier ones.
        for ax in (0..shape.len()).rev() {
            pos[ax] += 1;
            offset += step[ax];
            if pos[ax] < shape[ax] {
                break;
            }
            offset -= step[ax] * shape[ax];
            pos[ax] = 0;
        }
    }
    out
}

pub(crate) fn reshape(src: &Tile, out_shape: &[usize]) -> Result<Data, String> {
    let n: usize = out_shape.iter().product();
    if n != src.len() {
        return Err(format!(
            "cannot reshape {} ({} elements) to shape {out_shape:?}",
            src.ty(),
            src.len()
        ));
    }
    Ok(src.data.clone())
}

pub(crate) fn trans(src: &Tile) -> Result<Data, String> {
    let &[m, n] = src.shape.as_slice() else {
        return Err(format!("transpose of {}, which is not 2-D", src.ty()));
    };
    // Result is [n, m]: element (j, i) comes from (i, j).
    Ok(src.data.gather(&strided_indices(&[n, m], &[1, n])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{DType, ScalarType};

    fn ints(shape: Vec<usize>, v: Vec<i64>) -> Tile {
        Tile {
            scalar: ScalarType::Num(DType::I32),
            shape,
            data: Data::Int(v),
        }
    }

    #[test]
    fn broadcast_repeats_unit_axes() {
        let col = ints(vec![2, 1], vec![10, 20]);
        assert_eq!(
            broadcast(&col, &[2, 3]).unwrap(),
            Data::Int(vec![10, 10, 10, 20, 20, 20])
        );
        let row = ints(vec![1, 3], vec![1, 2, 3]);
        assert_eq!(
            broadcast(&row, &[2, 3]).unwrap(),
            Data::Int(vec![1, 2, 3, 1, 2, 3])
        );
        assert!(broadcast(&row, &[2, 4]).is_err());
    }

    #[test]
    fn transpose_swaps_axes() {
        let t = ints(vec![2, 3], vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(trans(&t).unwrap(), Data::Int(vec![1, 4, 2, 5, 3, 6]));
    }
}
