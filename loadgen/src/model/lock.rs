//! Which lock algorithm a mode measured: Redlock or one of the single-master baselines
//! (the baselines themselves run in [`crate::engine::locks`]).

use redlock_core::FanOut;

named! {
    /// Which lock the workers take (in result files: its name; older results: Redlock).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
    pub enum LockAlgorithm {
        #[default]
        Redlock = "redlock",
        Single = "single",
        SetnxExpire = "setnx-expire",
        SetnxGetset = "setnx-getset",
    }
}

/// Read by name, an unknown one refused naming every algorithm.
impl<'de> serde::Deserialize<'de> for LockAlgorithm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<LockAlgorithm, D::Error> {
        let name = String::deserialize(d)?;
        LockAlgorithm::parse(&name).map_err(serde::de::Error::custom)
    }
}

impl LockAlgorithm {
    /// The name in reports of its mode with `fanout`: the fan-out for Redlock, the algorithm
    /// for a baseline (one master: fan-out means nothing).
    pub fn mode_label(self, fanout: FanOut) -> &'static str {
        match self {
            LockAlgorithm::Redlock => fanout.as_str(),
            other => other.as_str(),
        }
    }

    /// One name.
    pub fn parse(text: &str) -> Result<LockAlgorithm, String> {
        let name = text.trim();
        let known = LockAlgorithm::ALL.into_iter().find(|a| a.as_str() == name);
        known.ok_or_else(|| {
            let names = LockAlgorithm::ALL.map(LockAlgorithm::as_str).join(", ");
            format!("{text:?}: not a lock algorithm (expected {names})")
        })
    }

    /// A comma list (`redlock,single`), in the given order, without repeats.
    pub fn parse_list(text: &str) -> Result<Vec<LockAlgorithm>, String> {
        let mut list = Vec::new();
        for part in text.split(',') {
            let a = LockAlgorithm::parse(part)?;
            if list.contains(&a) {
                return Err(format!("{text:?}: {} is listed twice", a.as_str()));
            }
            list.push(a);
        }
        Ok(list)
    }

    /// Whether the lock is decided by a vote of several masters (quorum figures apply).
    pub fn votes(self) -> bool {
        self == LockAlgorithm::Redlock
    }
}

/// `--lock`'s value: one or more algorithms, in order, without repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockList(pub Vec<LockAlgorithm>);

impl LockList {
    pub fn parse(text: &str) -> Result<LockList, String> {
        LockAlgorithm::parse_list(text).map(LockList)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithms_parse_by_name_and_lists_keep_their_order() {
        for a in LockAlgorithm::ALL {
            assert_eq!(LockAlgorithm::parse(a.as_str()), Ok(a));
        }
        assert_eq!(
            LockAlgorithm::parse_list("single, redlock").unwrap(),
            [LockAlgorithm::Single, LockAlgorithm::Redlock]
        );
        let err = LockAlgorithm::parse_list("redlock,setnx").unwrap_err();
        assert!(
            err.contains("\"setnx\"") && err.contains("setnx-getset"),
            "{err}"
        );
        let twice = LockAlgorithm::parse_list("single,single").unwrap_err();
        assert!(twice.contains("twice"), "{twice}");
        assert!(LockAlgorithm::Redlock.votes() && !LockAlgorithm::Single.votes());
    }
}
