//! Which requests the workbench obeys: those addressed to it and, from a browser, sent by its
//! own page.
//!
//! - **Host.** Every request must name the workbench in its `Host` header: its listen address
//!   (and `localhost` for a loopback one) with its port, or a name `[annotate] hosts` lists (a
//!   reverse proxy's). A page on another site whose name an attacker points at 127.0.0.1 (DNS
//!   rebinding) is refused, and so cannot read tasks.
//! - **Origin.** A request that changes something or leases work (every `POST`, and `GET
//!   /api/next`) must not come from another site: a browser says where a request comes from
//!   (`Origin`, `Sec-Fetch-Site`), and one from a foreign origin is refused, tokens or not. Tools
//!   (curl, scripts) send neither and are not concerned.
//! - **JSON.** A `POST` must say `Content-Type: application/json`. A foreign page can send a
//!   "simple" request (`text/plain`, a form) without asking first; for JSON a browser first asks
//!   the server (a preflight), which this server never allows.
//!
//! Each refusal is a 403 saying why. This module owns the rules; it knows requests, not tasks.

use std::net::SocketAddr;

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
        if bound.ip().is_loopback() {
            hosts.extend([format!("localhost:{port}"), format!("127.0.0.1:{port}"), format!("[::1]:{port}")]);
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
}
