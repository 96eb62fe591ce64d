//! Reaching a master: where it is (parsed from its URL by redis-rs), opening the stream (TCP,
//! TLS or a Unix socket), and the handshake (AUTH, SELECT, SCRIPT LOAD, INFO server) that
//! makes it usable and tells what the master runs (`server.rs`).
//! Every failure says what went wrong in the words of whoever said so.

use std::io;
use std::path::PathBuf;
use std::pin::Pin;
#[cfg(feature = "tls")]
use std::sync::Arc;
use std::task::{Context, Poll};

use redlock_resp::{encode_command, read_reply, Reply};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

use crate::vote::FailureKind;

use super::scripts::{self, server_error};
use super::server::MasterServer;
use crate::answer::Failure;

/// Where a master is and how to log in. Holds the password: never printed.
pub(crate) struct Target {
    addr: Addr,
    username: Option<String>,
    password: Option<String>,
    db: i64,
}

enum Addr {
    Tcp {
        host: String,
        port: u16,
    },
    #[cfg(feature = "tls")]
    Tls {
        host: String,
        port: u16,
        config: Arc<rustls::ClientConfig>,
    },
    Unix(PathBuf),
}

impl Target {
    /// Parses a master URL the way redis-rs does (`redis://`, `rediss://`, `unix://`,
    /// `redis+unix://`). The error describes the problem without echoing the URL.
    pub(crate) fn parse(url: &str) -> Result<Self, String> {
        use redis::{ConnectionAddr, IntoConnectionInfo};
        let info = url.into_connection_info().map_err(|e| match e.kind() {
            redis::ErrorKind::InvalidClientConfig => match e.detail() {
                Some(detail) if !detail.contains(url) => {
                    format!("not a valid redis://, rediss:// or unix:// URL ({detail})")
                }
                _ => "not a valid redis://, rediss:// or unix:// URL".to_string(),
            },
            kind => format!("{kind:?}"),
        })?;
        let addr = match info.addr() {
            ConnectionAddr::Tcp(host, port) => Addr::Tcp {
                host: host.clone(),
                port: *port,
            },
            #[cfg(feature = "tls")]
            ConnectionAddr::TcpTls {
                host,
                port,
                insecure,
                ..
            } => Addr::Tls {
                host: host.clone(),
                port: *port,
                config: super::tls::client_config(*insecure, &super::tls::TlsFiles::from_url(url))?,
            },
            ConnectionAddr::Unix(path) => Addr::Unix(path.clone()),
            #[allow(unreachable_patterns)]
            _ => {
                return Err(
                    "rediss:// (TLS) needs redlock-core built with the `tls` feature".to_string(),
                )
            }
        };
        #[cfg(feature = "tls")]
        if !matches!(addr, Addr::Tls { .. }) && !super::tls::TlsFiles::from_url(url).is_empty() {
            return Err("ssl_ca_certs, ssl_certfile and ssl_keyfile need a rediss:// URL".into());
        }
        let redis = info.redis_settings();
        Ok(Target {
            addr,
            username: redis.username().map(str::to_string),
            password: redis.password().map(str::to_string),
            db: redis.db(),
        })
    }

    /// Opens the stream (TCP connect, TLS handshake).
    pub(crate) async fn open(&self) -> Result<Stream, Failure> {
        match &self.addr {
            Addr::Tcp { host, port } => Ok(Stream::Tcp(tcp(host, *port).await?)),
            #[cfg(feature = "tls")]
            Addr::Tls { host, port, config } => {
                let tcp = tcp(host, *port).await?;
                super::tls::handshake(config, host, tcp)
                    .await
                    .map(|s| Stream::Tls(Box::new(s)))
            }
            Addr::Unix(path) => UnixStream::connect(path)
                .await
                .map(Stream::Unix)
                .map_err(|e| {
                    Failure::new(
                        FailureKind::Connection,
                        format!("cannot connect to the socket: {e}"),
                    )
                }),
        }
    }

    /// Logs in, selects the database, loads the scripts and asks what the server is
    /// (`INFO server`), in one pipelined exchange. `native`: whether release and extend may
    /// use the server's own commands where it has them.
    pub(crate) async fn handshake(
        &self,
        stream: &mut Stream,
        native: bool,
    ) -> Result<MasterServer, Failure> {
        let mut out = Vec::with_capacity(1024);
        let mut expect: Vec<Expect> = Vec::new();
        if let Some(password) = &self.password {
            match &self.username {
                Some(user) => {
                    encode_command(&mut out, &[b"AUTH", user.as_bytes(), password.as_bytes()])
                }
                None => encode_command(&mut out, &[b"AUTH", password.as_bytes()]),
            }
            expect.push(Expect::Ok("AUTH"));
        }
        if self.db != 0 {
            let db = self.db.to_string();
            encode_command(&mut out, &[b"SELECT", db.as_bytes()]);
            expect.push(Expect::Ok("SELECT"));
        }
        for (source, sha) in scripts::all() {
            encode_command(&mut out, &[b"SCRIPT", b"LOAD", source.as_bytes()]);
            expect.push(Expect::Sha(sha));
        }
        // Last: its answer (or refusal) decides nothing about the ones before.
        encode_command(&mut out, &[b"INFO", b"server"]);
        stream.write_all(&out).await.map_err(|e| io_failure(&e))?;
        let mut buf = Vec::with_capacity(2048);
        for want in expect {
            receive_reply(stream, &mut buf, |reply| want.check(reply)).await?;
        }
        let mut server = MasterServer::unknown();
        receive_reply(stream, &mut buf, |reply| {
            // Anything but INFO text (a refusal, a status) leaves the scripts in use.
            if let Reply::Bulk(info) = reply {
                server = MasterServer::from_info(info, native);
            }
            Ok(())
        })
        .await?;
        if !buf.is_empty() {
            return Err(Failure::new(
                FailureKind::Protocol,
                "unsolicited bytes after the connection handshake",
            ));
        }
        Ok(server)
    }
}

/// What a handshake command must answer.
enum Expect {
    Ok(&'static str),
    Sha(&'static str),
}

impl Expect {
    fn check(&self, reply: Reply) -> Result<(), Failure> {
        match (self, reply) {
            (Expect::Ok(_), Reply::Status(b"OK")) => Ok(()),
            (Expect::Sha(sha), Reply::Bulk(b)) if b == sha.as_bytes() => Ok(()),
            (_, Reply::Error(text)) => Err(server_error(Reply::text(text))),
            (Expect::Ok(what), other) => Err(Failure::new(
                FailureKind::Protocol,
                format!("{what} answered {other}, expected +OK"),
            )),
            (Expect::Sha(sha), other) => Err(Failure::new(
                FailureKind::Protocol,
                format!("SCRIPT LOAD answered {other}, expected the script's SHA1 {sha}"),
            )),
        }
    }
}

/// Reads the next reply into `buf` and hands it to `check` (it borrows the buffer), then
/// drops it from `buf`.
async fn receive_reply(
    stream: &mut Stream,
    buf: &mut Vec<u8>,
    check: impl FnOnce(Reply<'_>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    loop {
        match read_reply(buf) {
            Ok(Some((reply, used))) => {
                let checked = check(reply);
                buf.drain(..used);
                return checked;
            }
            Ok(None) => {}
            Err(e) => return Err(Failure::new(FailureKind::Protocol, e.to_string())),
        }
        buf.reserve(512);
        match stream.read_buf(buf).await {
            Ok(0) => {
                return Err(Failure::new(
                    FailureKind::Connection,
                    "connection closed by the master during the handshake",
                ))
            }
            Ok(_) => {}
            Err(e) => return Err(io_failure(&e)),
        }
    }
}

async fn tcp(host: &str, port: u16) -> Result<TcpStream, Failure> {
    // An address literal needs no resolver (which runs on a blocking thread: costly for a
    // master that is down and retried again and again).
    let addrs: Vec<std::net::SocketAddr> = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => vec![(ip, port).into()],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| {
                Failure::new(
                    FailureKind::Connection,
                    format!("cannot resolve host {host:?}: {e}"),
                )
            })?
            .collect(),
    };
    let mut last = None;
    for addr in &addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => {
                // Requests are small and latency-bound: send each batch at once.
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(e) => last = Some((addr, e)),
        }
    }
    Err(match last {
        Some((_, e)) if e.kind() == io::ErrorKind::ConnectionRefused => {
            Failure::new(FailureKind::Connection, "connection refused")
        }
        Some((_, e)) => Failure::new(FailureKind::Connection, format!("cannot connect: {e}")),
        None => Failure::new(
            FailureKind::Connection,
            format!("host {host:?} resolved to no address"),
        ),
    })
}

/// A socket error as a failure cause.
pub(crate) fn io_failure(e: &io::Error) -> Failure {
    // TLS 1.3 servers refuse a client (e.g. no client certificate) after the handshake, on
    // the first read: that is still a TLS failure, not a network one.
    #[cfg(feature = "tls")]
    if let Some(tls) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        return Failure::new(FailureKind::Tls, format!("TLS: {tls}"));
    }
    let what = match e.kind() {
        io::ErrorKind::ConnectionReset => "connection reset by the master".to_string(),
        io::ErrorKind::BrokenPipe => "connection closed by the master (broken pipe)".to_string(),
        io::ErrorKind::ConnectionAborted => "connection aborted".to_string(),
        _ => format!("connection error: {e}"),
    };
    Failure::new(FailureKind::Connection, what)
}

/// An open connection to a master.
pub(crate) enum Stream {
    Tcp(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    Unix(UnixStream),
}

macro_rules! each_stream {
    ($self:ident, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Stream::Tcp($s) => $e,
            #[cfg(feature = "tls")]
            Stream::Tls($s) => $e,
            Stream::Unix($s) => $e,
        }
    };
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        each_stream!(self, s => Pin::new(s).poll_read(cx, buf))
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        each_stream!(self, s => Pin::new(s).poll_write(cx, buf))
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each_stream!(self, s => Pin::new(s).poll_flush(cx))
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each_stream!(self, s => Pin::new(s).poll_shutdown(cx))
    }
}
