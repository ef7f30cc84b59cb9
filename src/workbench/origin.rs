//! Which requests the workbench obeys: those addressed to it and, from a browser, sent by its
//! own page.
//!
//! - **Host.** Every request must name the workbench in its `Host` header: its listen address
//!   (and `localhost` for a loopback one) with its port, or a name `[annotate] hosts` lists (a
//!   reverse proxy's). Listening on every address (`0.0.0.0`, `[::]`), the machine's own
//!   addresses and host name are its names, each with the listen port, besides the loopback
//!   ones. A page on another site whose name an attacker points at 127.0.0.1 (DNS rebinding) is
//!   refused, and so cannot read tasks.
//! - **Origin.** A request that changes something or leases work (every `POST`, and `GET
//!   /api/next`) must not come from another site: a browser says where a request comes from
//!   (`Origin`, `Sec-Fetch-Site`), and one from a foreign origin is refused, tokens or not. Tools
//!   (curl, scripts) send neither and are not concerned.
//! - **JSON.** A `POST` must say `Content-Type: application/json`. A foreign page can send a
//!   "simple" request (`text/plain`, a form) without asking first; for JSON a browser first asks
//!   the server (a preflight), which this server never allows.
//!
//! Each refusal is a 403 saying why. This module owns the rules; it knows requests, not tasks.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::http::{Request, Response};

/// The names a request may address the workbench by, lowercase, with their port when they
/// have one (`127.0.0.1:8040`, `localhost:8040`, `wb.example.org`).
#[derive(Debug, Clone)]
pub struct Origins {
    hosts: Vec<String>,
}

impl Origins {
    /// The names of a workbench listening on `bound`, and the `extra` names of `[annotate]
    /// hosts`.
    pub fn new(bound: SocketAddr, extra: &[String]) -> Origins {
        let port = bound.port();
        let mut hosts = Vec::new();
        if !bound.ip().is_unspecified() {
            hosts.push(bound.to_string());
        }
        if bound.ip().is_loopback() || bound.ip().is_unspecified() {
            hosts.extend([format!("localhost:{port}"), format!("127.0.0.1:{port}"), format!("[::1]:{port}")]);
        }
        if bound.ip().is_unspecified() {
            // Without them every request was refused, the page included, unless `hosts`
            // listed each name with its port.
            let v4_only = bound.is_ipv4();
            let own = interface_addresses().into_iter().filter(|a| !v4_only || a.is_ipv4());
            hosts.extend(own.map(|a| SocketAddr::new(a, port).to_string()));
            hosts.extend(host_name().map(|name| format!("{}:{port}", name.to_ascii_lowercase())));
        }
        hosts.extend(extra.iter().map(|h| h.trim().to_ascii_lowercase()));
        let mut seen = std::collections::HashSet::new();
        hosts.retain(|h| seen.insert(h.clone())); // listed once in a refusal's message
        Origins { hosts }
    }

    /// Whether `host` (a `Host` header, or the host part of an origin) names the workbench.
    fn is_ours(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        self.hosts.contains(&host)
    }

    /// Refuses `req` (a 403 saying why) unless it is addressed to the workbench and, when it
    /// changes something or leases work, comes from its own page.
    pub fn check(&self, req: &Request) -> Result<(), Response> {
        match &req.host {
            Some(host) if self.is_ours(host) => {}
            Some(host) => {
                return Err(Response::error(
                    403,
                    format!(
                        "Host {host:?} is not this workbench's ({}): a name it is reached by is listed in \
                         [annotate] hosts",
                        self.hosts.join(", ")
                    ),
                ))
            }
            None => return Err(Response::error(403, "a request must say which host it is for (Host)")),
        }
        let acts = req.method == "POST" || req.path == "/api/next";
        if !acts {
            return Ok(());
        }
        if let Some(origin) = &req.origin {
            let host = origin.strip_prefix("https://").or_else(|| origin.strip_prefix("http://"));
            if !host.is_some_and(|h| self.is_ours(h)) {
                return Err(Response::error(403, format!("a request from {origin:?} may not act on this workbench")));
            }
        }
        if req.fetch_site.as_deref().is_some_and(|s| !matches!(s, "same-origin" | "none")) {
            return Err(Response::error(403, "a request from another site may not act on this workbench"));
        }
        if req.method == "POST" {
            let json = req.content_type.as_deref().and_then(|t| t.split(';').next()).map(str::trim);
            if !json.is_some_and(|t| t.eq_ignore_ascii_case("application/json")) {
                return Err(Response::error(403, "a POST must send Content-Type: application/json"));
            }
        }
        Ok(())
    }
}

/// The addresses of this machine's network interfaces (none where they cannot be listed).
#[cfg(target_os = "linux")]
fn interface_addresses() -> Vec<IpAddr> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: on success getifaddrs points `list` at a linked list that stays valid until
    // freeifaddrs; each entry's address, when not null, is a sockaddr of the family it says.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return Vec::new();
        }
        let mut found = Vec::new();
        let mut at = list;
        while let Some(entry) = at.as_ref() {
            if let Some(addr) = entry.ifa_addr.as_ref() {
                match i32::from(addr.sa_family) {
                    libc::AF_INET => {
                        let v4 = &*(entry.ifa_addr as *const libc::sockaddr_in);
                        found.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr))));
                    }
                    libc::AF_INET6 => {
                        let v6 = &*(entry.ifa_addr as *const libc::sockaddr_in6);
                        found.push(IpAddr::V6(Ipv6Addr::from(v6.sin6_addr.s6_addr)));
                    }
                    _ => {}
                }
            }
            at = entry.ifa_next;
        }
        libc::freeifaddrs(list);
        found
    }
}

#[cfg(not(target_os = "linux"))]
fn interface_addresses() -> Vec<IpAddr> {
    Vec::new()
}

/// This machine's host name, as the kernel has it.
fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    Some(name.trim().to_string()).filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        method: &str,
        path: &str,
        host: Option<&str>,
        origin: Option<&str>,
        content_type: Option<&str>,
    ) -> Request {
        Request {
            method: method.into(),
            path: path.into(),
            bearer: None,
            host: host.map(str::to_string),
            origin: origin.map(str::to_string),
            content_type: content_type.map(str::to_string),
            fetch_site: None,
            body: Vec::new(),
        }
    }

    #[test]
    fn only_the_workbenchs_own_names_and_origins_are_obeyed() {
        let o = Origins::new("127.0.0.1:8040".parse().unwrap(), &["wb.example.org".to_string()]);
        let json = Some("application/json; charset=utf-8");
        let ok = |r: &Request| o.check(r).is_ok();
        assert!(ok(&request("GET", "/", Some("localhost:8040"), None, None)));
        assert!(ok(&request("GET", "/api/stats", Some("WB.example.org"), None, None)));
        assert!(!ok(&request("GET", "/", Some("evil.example:8040"), None, None)), "DNS rebinding");
        assert!(!ok(&request("GET", "/", Some("127.0.0.1:9999"), None, None)));
        assert!(!ok(&request("GET", "/", None, None, None)));
        // Acting: a foreign origin, or a body that is not JSON, is refused.
        let host = Some("127.0.0.1:8040");
        assert!(ok(&request("POST", "/api/answer", host, Some("http://127.0.0.1:8040"), json)));
        assert!(ok(&request("POST", "/api/answer", host, Some("https://wb.example.org"), json)));
        assert!(ok(&request("POST", "/api/answer", host, None, json)), "a tool sends no Origin");
        assert!(!ok(&request("POST", "/api/retrain", host, Some("http://evil.example"), json)));
        assert!(!ok(&request("POST", "/api/answer", host, Some("null"), json)));
        assert!(!ok(&request("POST", "/api/answer", host, None, Some("text/plain"))), "a simple request");
        assert!(!ok(&request("POST", "/api/answer", host, None, None)));
        assert!(!ok(&request("GET", "/api/next", host, Some("http://evil.example"), None)), "leasing work");
        assert!(ok(&request("GET", "/api/labels", host, Some("http://evil.example"), None)), "reading is harmless");
        let mut cross = request("GET", "/api/next", host, None, None);
        cross.fetch_site = Some("cross-site".into());
        assert!(!ok(&cross));
        cross.fetch_site = Some("same-origin".into());
        assert!(ok(&cross));
    }

    #[test]
    fn on_every_address_the_machines_own_addresses_and_name_with_the_port_are_its_names() {
        let o = Origins::new("0.0.0.0:8041".parse().unwrap(), &[]);
        let ok = |host: &str| o.check(&request("GET", "/", Some(host), None, None)).is_ok();
        for host in ["127.0.0.1:8041", "localhost:8041", "[::1]:8041"] {
            assert!(ok(host), "{host}: {:?}", o.hosts);
        }
        let own: Vec<IpAddr> = interface_addresses().into_iter().filter(IpAddr::is_ipv4).collect();
        assert!(!own.is_empty(), "no interface address found (not even loopback)");
        for a in own {
            assert!(ok(&SocketAddr::new(a, 8041).to_string()), "{a}: {:?}", o.hosts);
            assert!(!ok(&SocketAddr::new(a, 8042).to_string()), "another port");
        }
        if let Some(name) = host_name() {
            assert!(ok(&format!("{}:8041", name.to_uppercase())), "{name}");
        }
        assert!(!ok("evil.example:8041"), "DNS rebinding");
        assert!(!ok("0.0.0.0:8041"), "not an address a client reaches");
    }
}
