//! The capacity search's parts (the command is [`crate::commands::capacity`]): [`search`]
//! picks each step's rate, [`slo`] says whether a step met the objective, [`result`] keeps
//! the steps and answers.

pub mod plot;
pub mod result;
pub mod search;
pub mod slo;
pub mod table;
