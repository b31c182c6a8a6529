//! The compile pipeline for one source file and every point of its tuning space.
