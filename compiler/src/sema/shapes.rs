//! Numpy-style broadcasting of tile shapes (trailing axes aligned, size-1 axes repeat).

/// `[16, 8]`, `[]` for scalars.
pub fn fmt_shape(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

/// The shape both operands broadcast to, or `None` when some aligned axes differ
/// and neither is 1.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for (i, slot) in out.iter_mut().enumerate() {
        let da = dim_from_end(a, rank - 1 - i);
        let db = dim_from_end(b, rank - 1 - i);
        *slot = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// Whether `src` broadcasts to exactly `dst` (`dst` may add leading axes).
pub fn broadcasts_to(src: &[usize], dst: &[usize]) -> bool {
    src.len() <= dst.len() && broadcast_shapes(src, dst).as_deref() == Some(dst)
}

/// Axis `from_end` counted from the last one; missing leading axes are 1.
fn dim_from_end(shape: &[usize], from_end: usize) -> usize {
    if from_end < shape.len() {
        shape[shape.len() - 1 - from_end]
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shapes(&[16, 1], &[1, 32]), Some(vec![16, 32]));
        assert_eq!(broadcast_shapes(&[], &[4]), Some(vec![4]));
        assert_eq!(broadcast_shapes(&[8], &[16, 8]), Some(vec![16, 8]));
        assert_eq!(broadcast_shapes(&[16, 8], &[8, 8]), None);
        assert!(broadcasts_to(&[16, 1], &[16, 32]));
        assert!(!broadcasts_to(&[16, 8], &[8, 8]));
        assert!(!broadcasts_to(&[1, 16], &[16]));
        assert_eq!(fmt_shape(&[16, 8]), "[16, 8]");
    }
}
