//! What a master runs, learned when a connection opens, and so which commands release and
//! extend use on it: a server's own compare-and-delete / compare-and-refresh where it has
//! one (no Lua: less work for the master), the scripts elsewhere.
//!
//! Learned from `INFO server` (`server_name`, `valkey_version`, `redis_version`): Valkey
//! announces `redis_version:7.2.4` for compatibility, so the name decides which version
//! counts. A reply that is not a server's INFO text (an error, e.g. an ACL without INFO; a
//! status; a master that is not what it claims) leaves the master on the scripts: only a
//! version read from a well-formed INFO makes a master count as capable.

use std::fmt;

/// What a master runs and which commands this client's release and extend use on it
/// (see [`crate::Redlock::master_servers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MasterServer {
    /// `redis`, `valkey`, or `unknown` (INFO refused or not understood).
    pub name: String,
    /// The server's own version (`valkey_version` on Valkey), or empty when unknown.
    pub version: String,
    /// How a release compares and deletes.
    pub release: ReleaseCommand,
    /// How an extend compares and refreshes.
    pub extend: ExtendCommand,
    /// What made this connection leave a native command for the script (the command and
    /// the master's refusal, e.g. `DELIFEQ: ERR unknown command 'DELIFEQ' ...`), and how
    /// many requests were sent again with the script because of it: scripts until the
    /// master reconnects. `None` while every native command in use was accepted.
    pub refused: Option<NativeRefusal>,
}

/// A native command a master refused (renamed, unknown, denied by an ACL).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NativeRefusal {
    /// The command and the master's words: `DELIFEQ: NOPERM User app has no permissions ...`.
    pub cause: String,
    /// Requests sent again with the script on this connection (the call in flight, and any
    /// sent before the first refusal came back).
    pub retried: u64,
}

/// The command a release sends to one master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReleaseCommand {
    /// `EVALSHA` of the compare-and-delete script.
    Script,
    /// `DELIFEQ key token` (Valkey ≥ 9.0).
    DelIfEq,
    /// `DELEX key IFEQ token` (Redis ≥ 8.4).
    DelExIfEq,
}

/// The command an extend sends to one master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExtendCommand {
    /// `EVALSHA` of the compare-and-PEXPIRE script.
    Script,
    /// `SET key token IFEQ token PX ttl` (Valkey ≥ 8.1, Redis ≥ 8.4): never creates a
    /// missing key.
    SetIfEq,
}

impl ReleaseCommand {
    /// The command's name as the master's `INFO commandstats` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReleaseCommand::Script => "evalsha",
            ReleaseCommand::DelIfEq => "delifeq",
            ReleaseCommand::DelExIfEq => "delex",
        }
    }
}

impl ExtendCommand {
    /// The command's name as the master's `INFO commandstats` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            ExtendCommand::Script => "evalsha",
            ExtendCommand::SetIfEq => "set",
        }
    }
}

impl fmt::Display for MasterServer {
    /// `valkey 9.1.2 (release delifeq, extend set)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        if !self.version.is_empty() {
            write!(f, " {}", self.version)?;
        }
        write!(
            f,
            " (release {}, extend {})",
            self.release.as_str(),
            self.extend.as_str()
        )?;
        if let Some(refused) = &self.refused {
            write!(
                f,
                "; scripts after a refusal: {} ({} request(s) sent again)",
                refused.cause, refused.retried
            )?;
        }
        Ok(())
    }
}

/// A version as `(major, minor, patch)`; `None` unless it is three numbers.
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.trim().split('.').map(|p| p.parse::<u32>().ok());
    let version = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(version)
}

impl MasterServer {
    /// A master whose INFO was refused or not understood: scripts only.
    pub(crate) fn unknown() -> MasterServer {
        MasterServer {
            name: "unknown".into(),
            version: String::new(),
            release: ReleaseCommand::Script,
            extend: ExtendCommand::Script,
            refused: None,
        }
    }

    /// Leaves the native command `command` (`DELIFEQ`, `DELEX`, `SET`) for its script after
    /// the master refused it with `cause`; true when this changed which command is used (the
    /// first refusal of that command on this connection).
    pub(crate) fn fall_back(&mut self, command: &str, cause: &str) -> bool {
        let changed = if command == "SET" {
            std::mem::replace(&mut self.extend, ExtendCommand::Script) != ExtendCommand::Script
        } else {
            std::mem::replace(&mut self.release, ReleaseCommand::Script) != ReleaseCommand::Script
        };
        let refused = self.refused.get_or_insert_with(|| NativeRefusal {
            cause: String::new(),
            retried: 0,
        });
        refused.retried += 1;
        if changed {
            if !refused.cause.is_empty() {
                refused.cause.push_str("; ");
            }
            refused.cause.push_str(&format!("{command}: {cause}"));
        }
        changed
    }

    /// Reads `INFO server` text; `native`: whether the server's own commands may be used
    /// (off: scripts everywhere, e.g. to measure one path against the other).
    pub(crate) fn from_info(info: &[u8], native: bool) -> MasterServer {
        let text = String::from_utf8_lossy(info);
        let field = |name: &str| {
            text.lines().find_map(|line| {
                line.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix(':'))
                    .map(|v| v.trim().to_string())
            })
        };
        let valkey_version = field("valkey_version");
        let server_name = field("server_name");
        let (name, version) = match (
            server_name.as_deref(),
            valkey_version,
            field("redis_version"),
        ) {
            (Some("valkey"), Some(v), _) | (None, Some(v), _) => ("valkey", v),
            (None | Some("redis"), None, Some(v)) => ("redis", v),
            _ => return MasterServer::unknown(),
        };
        let mut server = MasterServer {
            name: name.into(),
            version,
            release: ReleaseCommand::Script,
            extend: ExtendCommand::Script,
            refused: None,
        };
        let Some(v) = parse_version(&server.version).filter(|_| native) else {
            return server;
        };
        match name {
            "valkey" => {
                if v >= (9, 0, 0) {
                    server.release = ReleaseCommand::DelIfEq;
                }
                if v >= (8, 1, 0) {
                    server.extend = ExtendCommand::SetIfEq;
                }
            }
            _ => {
                if v >= (8, 4, 0) {
                    server.release = ReleaseCommand::DelExIfEq;
                    server.extend = ExtendCommand::SetIfEq;
                }
            }
        }
        server
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(lines: &[&str]) -> Vec<u8> {
        let mut text = String::from("# Server\r\n");
        for line in lines {
            text.push_str(line);
            text.push_str("\r\n");
        }
        text.into_bytes()
    }

    #[test]
    fn each_server_gets_the_commands_its_version_has() {
        let valkey = |v: &str| {
            MasterServer::from_info(
                &info(&[
                    "redis_version:7.2.4",
                    "server_name:valkey",
                    &format!("valkey_version:{v}"),
                ]),
                true,
            )
        };
        let s = valkey("9.1.2");
        assert_eq!((s.name.as_str(), s.version.as_str()), ("valkey", "9.1.2"));
        assert_eq!(
            (s.release, s.extend),
            (ReleaseCommand::DelIfEq, ExtendCommand::SetIfEq)
        );
        let s = valkey("8.1.0");
        assert_eq!(
            (s.release, s.extend),
            (ReleaseCommand::Script, ExtendCommand::SetIfEq)
        );
        let s = valkey("8.0.2");
        assert_eq!(
            (s.release, s.extend),
            (ReleaseCommand::Script, ExtendCommand::Script)
        );
        let redis =
            |v: &str| MasterServer::from_info(&info(&[&format!("redis_version:{v}")]), true);
        let s = redis("7.0.15");
        assert_eq!((s.name.as_str(), s.version.as_str()), ("redis", "7.0.15"));
        assert_eq!(
            (s.release, s.extend),
            (ReleaseCommand::Script, ExtendCommand::Script)
        );
        let s = redis("8.4.0");
        assert_eq!(
            (s.release, s.extend),
            (ReleaseCommand::DelExIfEq, ExtendCommand::SetIfEq)
        );
    }

    #[test]
    fn scripts_when_asked_or_when_the_info_is_not_a_servers() {
        let s = MasterServer::from_info(
            &info(&["server_name:valkey", "valkey_version:9.1.2"]),
            false,
        );
        assert_eq!(
            (s.name.as_str(), s.release, s.extend),
            ("valkey", ReleaseCommand::Script, ExtendCommand::Script)
        );
        for hostile in [
            &b"OK"[..],
            b"",
            b"redis_version:99",
            b"valkey_version:9.x.1",
            b"server_name:keydb\r\nredis_version:9.0.0",
            b"redis_version_fake:9.0.0",
        ] {
            let s = MasterServer::from_info(hostile, true);
            assert_eq!(
                (s.release, s.extend),
                (ReleaseCommand::Script, ExtendCommand::Script),
                "{hostile:?}"
            );
        }
    }

    #[test]
    fn shown_with_its_commands() {
        let s =
            MasterServer::from_info(&info(&["server_name:valkey", "valkey_version:9.1.2"]), true);
        assert_eq!(s.to_string(), "valkey 9.1.2 (release delifeq, extend set)");
    }

    #[test]
    fn a_refused_command_moves_only_its_own_operation_to_the_script() {
        let mut s =
            MasterServer::from_info(&info(&["server_name:valkey", "valkey_version:9.1.2"]), true);
        assert!(s.fall_back("DELIFEQ", "ERR unknown command 'DELIFEQ'"));
        // A request already in flight when the first refusal came back is refused too.
        assert!(!s.fall_back("DELIFEQ", "ERR unknown command 'DELIFEQ'"));
        assert_eq!(
            (s.release, s.extend),
            (ReleaseCommand::Script, ExtendCommand::SetIfEq)
        );
        assert_eq!(
            s.to_string(),
            "valkey 9.1.2 (release evalsha, extend set); scripts after a refusal: \
             DELIFEQ: ERR unknown command 'DELIFEQ' (2 request(s) sent again)"
        );
        assert!(s.fall_back("SET", "NOPERM no permissions to run the 'set' command"));
        assert_eq!(s.extend, ExtendCommand::Script);
        assert!(s.refused.unwrap().cause.contains("; SET: NOPERM"));
    }
}
