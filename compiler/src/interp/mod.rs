//! CPU interpreter of Triton-IR: runs a kernel over its whole grid on host buffers.
