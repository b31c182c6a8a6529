// Copied verbatim by triton-opgen: what the generated kernel_args/grid read
// of one call. ORT tensors are dense row-major, so strides follow from shapes.

/// One kernel argument before the device addresses are known.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug)]
pub enum LaunchArg {
    /// The data of tensor i (inputs, then outputs).
    Ptr(usize),
    I32(i64),
    I64(i64),
    /// A float attribute, to a `float` or `double` parameter.
    F32(f64),
    F64(f64),
}

/// The shapes of one call: inputs then outputs, and the spec's dims.
pub struct Call {
    pub shapes: Vec<Vec<i64>>,
    pub dims: Vec<(&'static str, i64)>,
    /// The node's attributes, in op_spec::ATTRS order.
    pub attrs: Vec<crate::attrs::AttrValue>,
}

#[allow(dead_code)]
impl Call {
    pub fn dim(&self, name: &str) -> i64 {
        self.dims
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |&(_, v)| v)
    }

    /// Attribute `i` as a float (a float attribute) or an integer (int, bool).
    pub fn attr_f(&self, i: usize) -> f64 {
        self.attrs.get(i).map_or(0.0, |a| a.as_f64())
    }

    pub fn attr_i(&self, i: usize) -> i64 {
        self.attrs.get(i).map_or(0, |a| a.as_i64())
    }

    pub fn size(&self, tensor: usize, axis: i64) -> i64 {
        usize::try_from(axis)
            .ok()
            .and_then(|a| self.shapes.get(tensor)?.get(a).copied())
            .unwrap_or(0)
    }

    /// Elements between neighbours along `axis` (row-major).
    pub fn stride(&self, tensor: usize, axis: i64) -> i64 {
        let Some(shape) = self.shapes.get(tensor) else {
            return 0;
        };
        let from = usize::try_from(axis).map_or(shape.len(), |a| a.saturating_add(1));
        shape.iter().skip(from).product()
    }

    pub fn numel(&self, tensor: usize) -> i64 {
        self.shapes.get(tensor).map_or(0, |s| s.iter().product())
    }
}

/// Ceiling division; 0 for a zero divisor (the spec's checks run first).
#[allow(dead_code)]
pub fn cdiv(a: i64, b: i64) -> i64 {
    if b == 0 {
        0
    } else {
        a.saturating_add(b - 1).div_euclid(b)
    }
}

#[allow(dead_code)]
pub fn div(a: i64, b: i64) -> i64 {
    a.checked_div(b).unwrap_or(0)
}
