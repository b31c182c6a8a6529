//! Front end: lexer, preprocessor (with list macros = tuning space), parser.
pub mod ast;
pub mod token;
