//! One renderer per output format, all reading a [`crate::report::Report`].

pub mod csv;
pub mod hgrm;
pub mod json;
pub mod percentiles;
pub mod plot;
pub mod text;
