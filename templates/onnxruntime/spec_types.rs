// Copied verbatim by triton-opgen: the types the generated op_spec.rs uses.

// A given op may use only some variants.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug)]
pub enum DtypeDesc {
    /// Index into DTYPE_VARS.
    Var(usize),
    /// A fixed ONNX element type.
    Fixed(i32),
}

#[allow(dead_code)]
#[derive(Clone, Copy, Debug)]
pub enum DimDesc {
    Sym(&'static str),
    Lit(i64),
}

#[derive(Clone, Copy, Debug)]
pub struct TensorDesc {
    pub name: &'static str,
    pub dtype: DtypeDesc,
    pub dims: &'static [DimDesc],
}

/// ONNX element type names, for messages.
pub fn dtype_name(code: i32) -> &'static str {
    match code {
        1 => "float32",
        2 => "uint8",
        3 => "int8",
        4 => "uint16",
        5 => "int16",
        6 => "int32",
        7 => "int64",
        8 => "string",
        9 => "bool",
        10 => "float16",
        11 => "float64",
        12 => "uint32",
        13 => "uint64",
        16 => "bfloat16",
        0 => "undefined",
        _ => "an unsupported type",
    }
}

/// Bytes per element of an ONNX element type (0: not a fixed-size number).
pub fn dtype_bytes(code: i32) -> usize {
    match code {
        2 | 3 | 9 => 1,
        4 | 5 | 10 | 16 => 2,
        1 | 6 | 12 => 4,
        7 | 11 | 13 => 8,
        _ => 0,
    }
}
