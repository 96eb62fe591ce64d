//! What a master answers a request: granted, denied, or a failure with its kind and cause.
//! A leaf: the collector, the fan-out and every part of a master read it.

use std::sync::Arc;

use crate::vote::FailureKind;

/// Why a request failed on one master: the kind and the words of whoever said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) kind: FailureKind,
    pub(crate) cause: Arc<str>,
}

impl Failure {
    pub(crate) fn new(kind: FailureKind, cause: impl Into<Arc<str>>) -> Self {
        Failure {
            kind,
            cause: cause.into(),
        }
    }
}

/// Granted (`true`), denied (`false`) or failed.
pub(crate) type Answer = std::result::Result<bool, Failure>;
