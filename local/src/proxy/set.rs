//! One fault proxy per master, in master order.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::ops::Index;

use super::single::FaultProxy;
use crate::LocalMasters;

/// A [`FaultProxy`] in front of each of a set of masters; `proxies[i]` fronts master `i`.
#[derive(Debug)]
pub struct FaultProxies {
    proxies: Vec<FaultProxy>,
}

impl FaultProxies {
    /// Starts one proxy in front of every master of `masters` (on the current tokio runtime).
    pub async fn start(masters: &LocalMasters) -> io::Result<Self> {
        let mut upstreams = Vec::with_capacity(masters.len());
        for i in 0..masters.len() {
            let port = masters.port(i).map_err(io::Error::other)?;
            upstreams.push(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
        }
        Self::start_for(upstreams).await
    }

    /// Starts one proxy in front of each address, in order (e.g. in front of other proxies).
    pub async fn start_for(upstreams: impl IntoIterator<Item = SocketAddr>) -> io::Result<Self> {
        let mut proxies = Vec::new();
        for upstream in upstreams {
            proxies.push(FaultProxy::start(upstream).await?);
        }
        Ok(FaultProxies { proxies })
    }

    /// `redis://127.0.0.1:PORT` of every proxy, in master order: give these to the client.
    pub fn urls(&self) -> Vec<String> {
        self.proxies.iter().map(FaultProxy::url).collect()
    }

    /// The proxy in front of master `index`.
    pub fn get(&self, index: usize) -> Option<&FaultProxy> {
        self.proxies.get(index)
    }

    /// Number of proxies.
    pub fn len(&self) -> usize {
        self.proxies.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.proxies.is_empty()
    }

    /// The proxies, in master order.
    pub fn iter(&self) -> std::slice::Iter<'_, FaultProxy> {
        self.proxies.iter()
    }

    /// Removes every fault of every proxy.
    pub fn clear(&self) {
        self.proxies.iter().for_each(FaultProxy::clear);
    }

    /// Live connections through all proxies.
    pub fn connections(&self) -> usize {
        self.proxies.iter().map(FaultProxy::connections).sum()
    }
}

impl Index<usize> for FaultProxies {
    type Output = FaultProxy;

    /// The proxy in front of master `index`; panics if there is none (like a slice).
    fn index(&self, index: usize) -> &FaultProxy {
        &self.proxies[index]
    }
}

impl<'a> IntoIterator for &'a FaultProxies {
    type Item = &'a FaultProxy;
    type IntoIter = std::slice::Iter<'a, FaultProxy>;

    fn into_iter(self) -> Self::IntoIter {
        self.proxies.iter()
    }
}
