//! The readers of results: one writer per file format ([`formats`]), the text report and its
//! tables, the charts and pages they share.

pub mod capacity_plot;
pub mod capacity_table;
pub mod chart;
pub mod compare;
pub mod csv;
pub mod formats;
pub mod hgrm;
pub mod hlog;
pub mod html;
pub mod json;
pub mod plot;
pub mod scenarios;
pub mod sweep;
pub mod text;
pub mod uncertainty;
pub mod written;
