//! Responses meant for one user never reach another through a caching node: `Set-Cookie`
//! (not stored, or with the opt-in stored without it), answers to requests with
//! `Authorization`, `private`, `no-store` and `Vary: Cookie`, on the plain, coalesced and
//! revalidation paths. The test origin copies a field of each request (`X-Login`, the
//! client's name for itself) into its answer, so every test can tell whose answer a client
//! got.

mod common;

use common::origin::{cache_status, caching_node, get_with, load};
use common::{Client, WAIT};
use node::origin::SetCookie;
use std::net::SocketAddr;
use std::time::Instant;
use testkit::{Response, Route, TestOrigin};

/// A cacheable answer that sets, for each client, the cookie named in its `X-Login`.
fn login_route(cache_control: &str) -> Route {
    Route::ok(&[("Cache-Control", cache_control)], b"your profile").echo("X-Login", "Set-Cookie")
}

fn as_user(c: &mut Client, path: &str, user: &str) -> Response {
    get_with(c, path, &format!("X-Login: session={user}; HttpOnly\r\n"))
}

fn cookie(r: &Response) -> Option<&str> {
    r.header("set-cookie")
}

/// `n` clients, each on its own connection, ask for `path` as users u0..u(n-1) while the
/// origin holds its answers; the origin answers once every request is inside the node.
fn concurrent_users(origin: &TestOrigin, addr: SocketAddr, path: &str, n: usize) -> Vec<Response> {
    origin.hold();
    let clients: Vec<_> = (0..n)
        .map(|i| {
            let path = path.to_string();
            std::thread::spawn(move || as_user(&mut Client::connect(addr), &path, &format!("u{i}")))
        })
        .collect();
    // The report request makes n + 1.
    let deadline = Instant::now() + WAIT;
    while load(addr)["in_flight"].as_u64() < Some(n as u64 + 1) {
        assert!(Instant::now() < deadline, "requests never all arrived");
    }
    origin.release();
    clients.into_iter().map(|c| c.join().unwrap()).collect()
}

#[test]
fn a_set_cookie_answer_goes_only_to_the_client_that_fetched_it() {
    let origin = TestOrigin::start();
    origin.set("/profile", login_route("max-age=300"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    for user in ["a", "b"] {
        let r = as_user(&mut c, "/profile", user);
        assert_eq!(r.status, 200);
        assert_eq!(cookie(&r), Some(format!("session={user}; HttpOnly").as_str()));
        assert_eq!(cache_status(&r), "PASS", "not stored");
    }
    assert_eq!(origin.hits("/profile"), 2);
    // The plain answer (no cookie set) is stored as usual, and no later client, logged in
    // or not, is handed a cookie the origin did not give it.
    let plain = c.get("/profile");
    assert_eq!((cache_status(&plain), cookie(&plain)), ("MISS", None));
    let hit = c.get("/profile");
    assert_eq!((cache_status(&hit), cookie(&hit)), ("HIT", None));
    let other = as_user(&mut c, "/profile", "c");
    assert_eq!((cache_status(&other), cookie(&other)), ("HIT", None));
    assert_eq!(origin.hits("/profile"), 3);
}

#[test]
fn concurrent_clients_of_a_set_cookie_answer_each_get_their_own() {
    let origin = TestOrigin::start();
    origin.set("/two", login_route("max-age=300"));
    origin.set("/two-chunked", login_route("max-age=300").chunked());
    origin.set("/hundred", login_route("max-age=300"));
    let node = caching_node(&[origin.url()], |_| {});
    for (path, n) in [("/two", 2), ("/two-chunked", 2), ("/hundred", 100)] {
        let answers = concurrent_users(&origin, node.addr, path, n);
        for (i, r) in answers.iter().enumerate() {
            assert_eq!((r.status, r.body.as_slice()), (200, &b"your profile"[..]), "{path}");
            let own = format!("session=u{i}; HttpOnly");
            assert_eq!(cookie(r), Some(own.as_str()), "{path}: client {i} got another's");
        }
        assert_eq!(origin.hits(path), n as u64, "{path}: every client fetched its own");
    }
    let later = node.client().get("/hundred");
    assert_eq!(cookie(&later), None, "a later plain client");
    assert_eq!(load(node.addr)["cache_bytes"].as_u64().map(|b| b > 0), Some(true));
}

#[test]
fn an_uncacheable_answer_lets_later_requests_go_straight_to_the_origin() {
    let origin = TestOrigin::start();
    origin.set("/login", login_route("max-age=300"));
    let node = caching_node(&[origin.url()], |_| {});
    assert!(cookie(&as_user(&mut node.client(), "/login", "first")).is_some());
    // Two requests while the origin holds its answers: with the uncacheable marker the
    // second does not queue behind the first's fetch (whose answer it could not use), so
    // both reach the origin at once.
    origin.hold();
    let addr = node.addr;
    let clients: Vec<_> = ["x", "y"]
        .into_iter()
        .map(|u| std::thread::spawn(move || as_user(&mut Client::connect(addr), "/login", u)))
        .collect();
    let deadline = Instant::now() + WAIT;
    while origin.hits("/login") < 3 {
        assert!(Instant::now() < deadline, "the second request queued behind the first");
    }
    origin.release();
    for (c, u) in clients.into_iter().zip(["x", "y"]) {
        let r = c.join().unwrap();
        assert_eq!(cookie(&r), Some(format!("session={u}; HttpOnly").as_str()));
    }
    // The marker does not keep a cacheable answer out of the cache.
    origin.set("/login", Route::ok(&[("Cache-Control", "max-age=300")], b"now static"));
    assert_eq!(cache_status(&node.client().get("/login")), "MISS");
    assert_eq!(cache_status(&node.client().get("/login")), "HIT");
}

#[test]
fn a_304_with_a_new_set_cookie_stays_with_its_client() {
    let origin = TestOrigin::start();
    let fields = [("Cache-Control", "max-age=0"), ("ETag", "\"v1\"")];
    origin.set("/page", Route::ok(&fields, b"page").echo("X-Login", "Set-Cookie"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    assert_eq!(cache_status(&c.get("/page")), "MISS");
    // Stale: revalidated, and the origin's 304 sets this client's cookie.
    let b = as_user(&mut c, "/page", "b");
    assert_eq!((b.status, b.body.as_slice()), (200, &b"page"[..]));
    assert_eq!(cookie(&b), Some("session=b; HttpOnly"));
    for _ in 0..2 {
        let plain = c.get("/page");
        assert_eq!((plain.status, plain.body.as_slice()), (200, &b"page"[..]));
        assert_eq!(cookie(&plain), None, "the 304's cookie was kept for everyone");
    }
}

#[test]
fn with_the_opt_in_the_stored_object_is_served_without_set_cookie() {
    let origin = TestOrigin::start();
    origin.set("/logo.png", login_route("max-age=300"));
    origin.set("/hot.png", login_route("max-age=300"));
    let node = caching_node(&[origin.url()], |o| o.set_cookie = SetCookie::StoreWithout);
    let mut c = node.client();
    let first = as_user(&mut c, "/logo.png", "a");
    assert_eq!((cache_status(&first), cookie(&first)), ("MISS", Some("session=a; HttpOnly")));
    let second = as_user(&mut c, "/logo.png", "b");
    assert_eq!((cache_status(&second), cookie(&second)), ("HIT", None));
    let plain = c.get("/logo.png");
    assert_eq!((cache_status(&plain), cookie(&plain)), ("HIT", None));
    assert_eq!(origin.hits("/logo.png"), 1);
    // Coalesced: one fetch; its client gets its cookie, every other client none.
    let answers = concurrent_users(&origin, node.addr, "/hot.png", 100);
    let mut with_cookie = 0;
    for (i, r) in answers.iter().enumerate() {
        assert_eq!(r.status, 200);
        if let Some(got) = cookie(r) {
            assert_eq!(got, format!("session=u{i}; HttpOnly"), "client {i} got another's");
            with_cookie += 1;
        }
    }
    assert_eq!((with_cookie, origin.hits("/hot.png")), (1, 1));
}

#[test]
fn with_the_opt_in_a_304_refreshes_the_stored_object_without_its_cookie() {
    let origin = TestOrigin::start();
    let fields = [("Cache-Control", "max-age=0"), ("ETag", "\"v1\"")];
    origin.set("/p", Route::ok(&fields, b"p").echo("X-Login", "Set-Cookie"));
    let node = caching_node(&[origin.url()], |o| o.set_cookie = SetCookie::StoreWithout);
    let mut c = node.client();
    assert_eq!(cache_status(&c.get("/p")), "MISS");
    let b = as_user(&mut c, "/p", "b");
    assert_eq!((cache_status(&b), cookie(&b)), ("REVALIDATED", Some("session=b; HttpOnly")));
    let plain = c.get("/p");
    assert_eq!((cache_status(&plain), cookie(&plain)), ("REVALIDATED", None));
}

#[test]
fn answers_to_authorized_requests_are_stored_only_when_the_origin_allows() {
    let origin = TestOrigin::start();
    origin.set("/plain", Route::ok(&[("Cache-Control", "max-age=600")], b"mine"));
    let allowed = [
        ("/public", "public, max-age=600"),
        ("/s-maxage", "s-maxage=600"),
        ("/must-revalidate", "max-age=600, must-revalidate"),
    ];
    for (path, cc) in allowed {
        origin.set(path, Route::ok(&[("Cache-Control", cc)], b"ok"));
    }
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    let auth = "Authorization: Basic dTpw\r\n";
    for _ in 0..2 {
        assert_eq!(cache_status(&get_with(&mut c, "/plain", auth)), "PASS");
    }
    assert_eq!(origin.hits("/plain"), 2);
    for (path, cc) in allowed {
        assert_eq!(cache_status(&get_with(&mut c, path, auth)), "MISS", "{cc}");
        assert_eq!(cache_status(&get_with(&mut c, path, auth)), "HIT", "{cc}");
    }
}

#[test]
fn private_and_no_store_answers_reach_only_their_own_client_when_coalesced() {
    let origin = TestOrigin::start();
    for (path, cc) in [("/private", "private, max-age=600"), ("/no-store", "no-store")] {
        origin.set(path, Route::ok(&[("Cache-Control", cc)], b"yours").echo("X-Login", "X-User"));
    }
    let node = caching_node(&[origin.url()], |_| {});
    for path in ["/private", "/no-store"] {
        let answers = concurrent_users(&origin, node.addr, path, 20);
        for (i, r) in answers.iter().enumerate() {
            let own = format!("session=u{i}; HttpOnly");
            assert_eq!(r.header("x-user"), Some(own.as_str()), "{path}: client {i}");
            assert_eq!(cache_status(r), "PASS", "{path}");
        }
    }
    assert_eq!(load(node.addr)["cache_bytes"].as_u64(), Some(0), "nothing stored");
}

#[test]
fn vary_cookie_keys_the_stored_object_per_cookie_value() {
    let origin = TestOrigin::start();
    let fields = [("Cache-Control", "max-age=600"), ("Vary", "Cookie")];
    origin.set("/cart", Route::ok(&fields, b"cart").echo("Cookie", "X-Cart-Of"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    let as_cookie = |c: &mut Client, v: &str| get_with(c, "/cart", &format!("Cookie: {v}\r\n"));
    for (status, v) in [("MISS", "id=a"), ("MISS", "id=b"), ("HIT", "id=a"), ("HIT", "id=b")] {
        let r = as_cookie(&mut c, v);
        assert_eq!((cache_status(&r), r.header("x-cart-of")), (status, Some(v)));
    }
    let none = c.get("/cart");
    assert_eq!((cache_status(&none), none.header("x-cart-of")), ("MISS", None));
    assert_eq!(origin.hits("/cart"), 3, "one fetch per cookie value");
}
