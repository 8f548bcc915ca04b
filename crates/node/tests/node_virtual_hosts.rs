//! Virtual hosts through a caching node: by default one origin URL is one site (the origin
//! gets its own authority, every `Host` names the same object); with `--origin-host
//! client` the origin gets the client's `Host` and each site has its own objects, its own
//! invalidations and purges. All on loopback.

mod common;

use common::origin::{cache_status, caching_node};
use common::Client;
use node::origin::OriginHost;
use testkit::{Route, TestOrigin};

/// GET `path` on the site `host`: the cache status, the site the origin answered for
/// (`X-Site`, its echo of the `Host` it got) and the body.
fn get(c: &mut Client, host: &str, path: &str) -> (String, String, Vec<u8>) {
    c.send(format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes());
    let r = c.response(false);
    assert_eq!(r.status, 200, "{host}{path}");
    let site = r.header("x-site").unwrap_or("").to_string();
    (cache_status(&r).to_string(), site, r.body)
}

fn site_origin() -> TestOrigin {
    let origin = TestOrigin::start();
    for path in ["/page", "/other"] {
        let route = Route::ok(&[("Cache-Control", "max-age=600")], b"page").echo("host", "X-Site");
        origin.set(path, route);
    }
    origin
}

#[test]
fn by_default_one_origin_url_is_one_site_whatever_the_host() {
    let origin = site_origin();
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    let own = origin.addr.to_string();
    assert_eq!(get(&mut c, "shop.test", "/page"), ("MISS".into(), own.clone(), b"page".to_vec()));
    assert_eq!(get(&mut c, "blog.test", "/page"), ("HIT".into(), own, b"page".to_vec()));
    assert_eq!(origin.hits("/page"), 1);
}

#[test]
fn with_client_hosts_each_site_has_its_own_objects() {
    let origin = site_origin();
    let node = caching_node(&[origin.url()], |o| o.host = OriginHost::Client);
    let mut c = node.client();
    for (host, status) in [("shop.test", "MISS"), ("blog.test:8080", "MISS")] {
        assert_eq!(get(&mut c, host, "/page"), (status.into(), host.into(), b"page".to_vec()));
    }
    // Each site is answered from its own object; a host differing only in case is the same.
    for host in ["shop.test", "blog.test:8080", "SHOP.test"] {
        let (status, site, _) = get(&mut c, host, "/page");
        assert_eq!(status, "HIT", "{host}");
        assert_eq!(site.to_ascii_lowercase(), host.to_ascii_lowercase());
    }
    assert_eq!(origin.hits("/page"), 2, "one fetch a site");

    // An unsafe request on one site drops that site's object only.
    c.send(b"DELETE /page HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(c.response(false).status, 200);
    assert_eq!(get(&mut c, "shop.test", "/page").0, "MISS");
    assert_eq!(get(&mut c, "blog.test:8080", "/page").0, "HIT");

    // A bad Host is refused, not stored under a name no site has.
    c.send(b"GET /page HTTP/1.1\r\nHost: a b\r\n\r\n");
    assert_eq!(c.response(false).status, 400);
}

#[test]
fn a_router_invalidation_names_one_site_or_every_site() {
    let origin = site_origin();
    let node = caching_node(&[origin.url()], |o| o.host = OriginHost::Client);
    let mut c = node.client();
    for host in ["a.test", "b.test"] {
        for path in ["/page", "/other"] {
            assert_eq!(get(&mut c, host, path).0, "MISS");
        }
    }
    let mut invalidate = |inv: wire::Invalidation| {
        c.send(&inv.request("node"));
        let r = c.response(false);
        assert_eq!(r.status, 200);
        String::from_utf8(r.body).unwrap()
    };
    let on_b = wire::Invalidation::exact("/page").on_site(Some(b"B.test"));
    assert_eq!(invalidate(on_b), "dropped\n");
    let mut c = node.client();
    assert_eq!(get(&mut c, "a.test", "/page").0, "HIT");
    assert_eq!(get(&mut c, "b.test", "/page").0, "MISS");
    let mut c2 = node.client();
    c2.send(&wire::Invalidation::exact("/other").request("node"));
    assert_eq!(String::from_utf8(c2.response(false).body).unwrap(), "dropped\n");
    assert_eq!(get(&mut c, "a.test", "/other").0, "MISS", "every site");
    assert_eq!(get(&mut c, "b.test", "/other").0, "MISS", "every site");
}
