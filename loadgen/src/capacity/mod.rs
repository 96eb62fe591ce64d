//! The capacity search's parts (the command is [`crate::commands::capacity`]): [`search`]
//! picks each step's rate, [`slo`] says whether a step met the objective, [`crate::model::capacity`]
//! keeps the steps and answers.

pub mod reproduce;
pub mod search;
pub mod slo;
