//! The HTTP side of `--prometheus`: a `tiny_http` server on its own thread answering
//! `GET /metrics` with the live figures, from the moment the address is bound until the run
//! (and the optional linger) is over.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::thread::JoinHandle;

use tiny_http::{Header, Method, Response, Server};

use super::encode::{self, CONTENT_TYPE};
use super::LiveFigures;
use crate::error::LoadgenError;

/// `--prometheus ADDR`: `HOST:PORT` to listen on (`:PORT`: every interface; port 0: any
/// free port).
pub fn parse_listen_address(text: &str) -> Result<SocketAddr, String> {
    let bad = |why: String| {
        format!(
            "{text:?} is not an address to listen on ({why}): write HOST:PORT, e.g. 127.0.0.1:9464, [::1]:9464 or :9464 (every interface)"
        )
    };
    let Some((host, port)) = text.trim().rsplit_once(':') else {
        return Err(bad("no port".into()));
    };
    let port: u16 = port
        .parse()
        .map_err(|_| bad(format!("port {port:?} is not a number from 0 to 65535")))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Ok(SocketAddr::from(([0, 0, 0, 0], port)));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| bad(format!("cannot resolve {host:?}: {e}")))?
        .next()
        .ok_or_else(|| bad(format!("{host:?} has no address")))
}

/// A running exporter: serves the figures until dropped.
pub struct Exporter {
    figures: Arc<LiveFigures>,
    server: Arc<Server>,
    address: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl Exporter {
    /// Binds `address` and starts serving `figures`. An address that cannot be bound (in
    /// use, not local, not permitted) is a usage error naming it.
    pub fn start(address: SocketAddr, figures: Arc<LiveFigures>) -> Result<Exporter, LoadgenError> {
        let server = Server::http(address).map_err(|e| {
            LoadgenError::Usage(format!("--prometheus {address}: cannot listen there: {e}"))
        })?;
        let address = server
            .server_addr()
            .to_ip()
            .expect("a server bound to an IP address listens on one");
        let server = Arc::new(server);
        let registry = encode::registry(Arc::clone(&figures));
        let serving = Arc::clone(&server);
        let thread = std::thread::Builder::new()
            .name("prometheus".into())
            .spawn(move || {
                // Ends when `Exporter::drop` unblocks the server.
                for request in serving.incoming_requests() {
                    let response = match (request.method(), request.url()) {
                        (Method::Get, "/metrics") => {
                            Response::from_string(encode::render(&registry))
                                .with_header(header(CONTENT_TYPE))
                        }
                        (Method::Get, "/") => Response::from_string(
                            "redlock-loadgen: the running figures are at /metrics\n",
                        )
                        .with_header(header("text/plain; charset=utf-8")),
                        _ => Response::from_string("not found: the figures are at GET /metrics\n")
                            .with_status_code(404)
                            .with_header(header("text/plain; charset=utf-8")),
                    };
                    // A scraper that hung up gets nothing: there is no one to tell.
                    let _ = request.respond(response);
                }
            })
            .map_err(|e| LoadgenError::Failed(format!("starting the --prometheus server: {e}")))?;
        Ok(Exporter {
            figures,
            server,
            address,
            thread: Some(thread),
        })
    }

    /// Where it listens (the port chosen when ADDR asked for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The figures it serves (what the run adds to).
    pub fn figures(&self) -> Arc<LiveFigures> {
        Arc::clone(&self.figures)
    }
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn header(content_type: &str) -> Header {
    Header::from_bytes("Content-Type", content_type).expect("a valid header")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_are_ip_and_port() {
        assert_eq!(
            parse_listen_address("127.0.0.1:9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            parse_listen_address(":9464").unwrap(),
            "0.0.0.0:9464".parse().unwrap()
        );
        assert!(parse_listen_address("localhost:9464")
            .unwrap()
            .ip()
            .is_loopback());
        let e = parse_listen_address("127.0.0.1:99999").unwrap_err();
        assert!(
            e.contains("\"127.0.0.1:99999\"") && e.contains("65535"),
            "{e}"
        );
        let e = parse_listen_address("127.0.0.1").unwrap_err();
        assert!(e.contains("no port"), "{e}");
    }

    #[test]
    fn an_address_in_use_is_a_usage_error_naming_it() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = taken.local_addr().unwrap();
        let e = Exporter::start(address, Arc::default()).unwrap_err();
        let LoadgenError::Usage(message) = e else {
            panic!("not a usage error: {e:?}");
        };
        assert!(
            message.contains(&format!("--prometheus {address}")),
            "{message}"
        );
    }
}
