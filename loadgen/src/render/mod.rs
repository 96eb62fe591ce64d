//! One renderer per output format, all reading a [`crate::model::report::Report`].

pub mod capacity_plot;
pub mod capacity_table;
pub mod chart;
pub mod compare;
pub mod csv;
pub mod hgrm;
pub mod hlog;
pub mod html;
pub mod json;
pub mod plot;
pub mod scenarios;
pub mod sweep;
pub mod text;
pub mod uncertainty;
