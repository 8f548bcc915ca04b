//! `bench` against an in-process server: exact counts and bytes, errors by kind, session
//! replay with think times (paused time), open-loop latency from the intended send time,
//! per-node share, and the ramp's three stop conditions.

mod support;

use std::time::Duration;

use bench::{BaseUrl, Config, Mode, Plan, RampLimits, RampSpec, Report, StopReason};
use support::{Behaviour, TestServer};

fn plan(server: &TestServer, path: &str) -> (BaseUrl, Plan) {
    let base = BaseUrl::parse(&server.url()).unwrap();
    let plan = Plan::single(base.join(path));
    (base, plan)
}

async fn run(config: &Config) -> Report {
    bench::run(config, |_| {}).await.unwrap()
}

fn bounded(base: BaseUrl, plan: Plan, users: u32, requests: u64) -> Config {
    let mut config = Config::closed(base, plan, users);
    config.requests = Some(requests);
    config.cycle = true;
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_counts_requests_and_bytes_exactly() {
    let server = TestServer::start(Behaviour { body_len: 1000, ..Behaviour::default() }).await;
    let (base, plan) = plan(&server, "/file");
    let report = run(&bounded(base, plan, 4, 1000)).await;
    assert_eq!(report.stop_reason, StopReason::Requests);
    assert_eq!(report.total.requests, 1000);
    assert_eq!(server.requests(), 1000);
    assert_eq!(report.total.errors.total, 0);
    assert_eq!(report.total.body_bytes, 1000 * 1000);
    assert_eq!(report.total.bytes, server.bytes_written());
    assert_eq!(report.total.connect_ms.count, 4, "one connection per user");
    assert_eq!(server.connections(), 4);
    assert!(report.total.latency_ms.p50 > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_per_request_opens_one_connection_each() {
    let server = TestServer::start(Behaviour { body_len: 10, ..Behaviour::default() }).await;
    let (base, plan) = plan(&server, "/");
    let mut config = bounded(base, plan, 3, 200);
    config.connection_per_request = true;
    let report = run(&config).await;
    assert_eq!(report.total.requests, 200);
    assert_eq!(server.connections(), 200);
    assert_eq!(report.total.connect_ms.count, 200);
    assert_eq!(report.total.bytes, server.bytes_written());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_bodies_are_framed_and_counted() {
    let body_len = 1234;
    let server =
        TestServer::start(Behaviour { body_len, chunked: true, ..Behaviour::default() }).await;
    let (base, plan) = plan(&server, "/");
    let report = run(&bounded(base, plan, 2, 50)).await;
    assert_eq!(report.total.requests, 50);
    assert_eq!(report.total.errors.total, 0);
    assert_eq!(report.total.body_bytes, 50 * body_len as u64);
    assert_eq!(report.total.bytes, server.bytes_written());
    assert_eq!(server.connections(), 2, "chunked responses keep the connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_delimited_by_close_are_counted() {
    let server =
        TestServer::start(Behaviour { body_len: 777, until_close: true, ..Behaviour::default() })
            .await;
    let (base, plan) = plan(&server, "/");
    let report = run(&bounded(base, plan, 2, 30)).await;
    assert_eq!(report.total.requests, 30);
    assert_eq!(report.total.errors.total, 0);
    assert_eq!(report.total.body_bytes, 30 * 777);
    assert_eq!(report.total.bytes, server.bytes_written());
    assert_eq!(server.connections(), 30);
}

#[tokio::test(start_paused = true)]
async fn warm_up_requests_are_sent_but_not_counted() {
    let server = TestServer::start(Behaviour::default()).await;
    let (base, plan) = plan(&server, "/");
    let mut config = Config::closed(base, plan, 1);
    config.mode = Mode::Open { rate: 10.0, connections: 1 };
    config.cycle = true;
    config.timeout = None;
    config.warmup = Duration::from_secs(1);
    config.duration = Some(Duration::from_secs(1));
    let report = run(&config).await;
    assert_eq!(server.requests(), 20, "due at 0, 0.1, ... 1.9 s");
    assert_eq!(report.total.requests, 10);
    assert_eq!(report.stop_reason, StopReason::Duration);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_counted_by_kind() {
    let server = TestServer::start(Behaviour::default()).await;
    let base = BaseUrl::parse(&server.url()).unwrap();
    let paths = vec![base.join("/missing"), base.join("/broken"), base.join("/ok")];
    let plan = Plan::flat(paths, [0, 1, 1, 2]).unwrap();
    let report = run(&Config::closed(base, plan, 1)).await;
    assert_eq!(report.stop_reason, StopReason::Finished);
    assert_eq!(report.total.requests, 4);
    let e = report.total.errors;
    assert_eq!((e.total, e.status_4xx, e.status_5xx), (3, 1, 2));

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    let base = BaseUrl::parse(&url).unwrap();
    let report = run(&bounded(base.clone(), Plan::single(base.join("/")), 2, 5)).await;
    assert_eq!(report.total.requests, 0);
    assert_eq!(report.total.errors.connect, 5);
}

#[tokio::test(start_paused = true)]
async fn a_stalled_server_times_out() {
    let stall = Duration::from_secs(3600);
    let server =
        TestServer::start(Behaviour { stall_first: Some(stall), ..Behaviour::default() }).await;
    let (base, plan) = plan(&server, "/");
    let mut config = bounded(base, plan, 1, 3);
    config.timeout = Some(Duration::from_secs(1));
    let report = run(&config).await;
    assert_eq!(report.total.errors.timeout, 1);
    assert_eq!(report.total.requests, 2, "the others are answered on a new connection");
}

#[tokio::test(start_paused = true)]
async fn sessions_are_replayed_in_order_with_their_think_times() {
    let server = TestServer::start(Behaviour::default()).await;
    let base = BaseUrl::parse(&server.url()).unwrap();
    let paths: Vec<String> =
        ["/a0", "/a1", "/a2", "/b0", "/b1"].iter().map(|p| base.join(p)).collect();
    let sessions = vec![vec![(0, 0), (1, 3000), (2, 600)], vec![(3, 0), (4, 4000)]];
    let plan = Plan::sessions(paths, sessions, 0.5).unwrap();
    let mut config = Config::closed(base, plan, 2);
    config.timeout = None;
    let report = run(&config).await;
    assert_eq!(report.total.requests, 5);
    let arrivals = server.arrivals();
    let at = |path: &str| arrivals.iter().find(|a| a.path == path).unwrap().at;
    let gap = |a: &str, b: &str| at(b).checked_duration_since(at(a)).expect("sent in order");
    let near = |got: Duration, want_ms: u64| {
        let want = Duration::from_millis(want_ms);
        assert!(got >= want && got < want + Duration::from_millis(50), "{got:?} vs {want:?}");
    };
    near(gap("/a0", "/a1"), 1500);
    near(gap("/a1", "/a2"), 300);
    near(gap("/b0", "/b1"), 2000);
}

#[tokio::test(start_paused = true)]
async fn open_loop_latency_counts_from_the_intended_send_time() {
    let stall = Duration::from_secs(1);
    let server =
        TestServer::start(Behaviour { stall_first: Some(stall), ..Behaviour::default() }).await;
    let (base, plan) = plan(&server, "/");
    let mut config = bounded(base, plan, 1, 10);
    config.mode = Mode::Open { rate: 10.0, connections: 1 };
    config.timeout = None;
    let report = run(&config).await;
    assert_eq!(report.total.requests, 10);
    // Due every 100 ms but all answered after the 1 s stall: waits of 1000, 900, ... 100 ms.
    let l = report.total.latency_ms;
    assert!(l.max >= 999.0, "{l:?}");
    assert!(l.p50 >= 499.0, "{l:?}");
    assert!(l.mean >= 549.0, "{l:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_node_share_comes_from_x_larder_node() {
    let nodes = vec!["n1".to_string(), "n2".to_string()];
    let server = TestServer::start(Behaviour { nodes, ..Behaviour::default() }).await;
    let (base, plan) = plan(&server, "/");
    let report = run(&bounded(base, plan, 1, 100)).await;
    assert_eq!(report.total.nodes.get("n1"), Some(&50));
    assert_eq!(report.total.nodes.get("n2"), Some(&50));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_router_share_comes_from_x_larder_router() {
    let routers = vec!["r1".to_string(), "r2".to_string()];
    let server = TestServer::start(Behaviour { routers, ..Behaviour::default() }).await;
    let (base, plan) = plan(&server, "/");
    let mut config = bounded(base, plan, 1, 100);
    // A connection each: the fake server names its routers by connection, in turn.
    config.connection_per_request = true;
    let report = run(&config).await;
    assert_eq!(report.total.routers.get("r1"), Some(&50));
    assert_eq!(report.total.routers.get("r2"), Some(&50));
    let table = bench::table::render(&report);
    assert!(table.contains("routers     r1 50.0% (50), r2 50.0% (50)"), "{table}");
    let json = serde_json::to_value(&report.total).unwrap();
    assert_eq!(json["routers"]["r2"], 50);
    assert!(bench::html::render_html(&report).contains("Per-router share"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_x_larder_router_the_outputs_have_no_router_share() {
    let server = TestServer::start(Behaviour::default()).await;
    let (base, plan) = plan(&server, "/");
    let report = run(&bounded(base, plan, 1, 10)).await;
    assert!(report.total.routers.is_empty());
    assert!(!bench::table::render(&report).contains("routers"));
    let json = serde_json::to_value(&report.total).unwrap();
    assert!(json.get("routers").is_none(), "{json}");
    assert!(!bench::html::render_html(&report).contains("Per-router share"));
}

fn ramp(server: &TestServer, spec: &str, limits: RampLimits) -> Config {
    let (base, plan) = plan(server, "/");
    let mut config = Config::closed(base, plan, 1);
    config.mode = Mode::Ramp { spec: RampSpec::parse(spec).unwrap(), limits };
    config.cycle = true;
    config.duration = Some(Duration::from_secs(30));
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ramp_stops_when_the_server_fails_a_request() {
    let server =
        TestServer::start(Behaviour { fail_above_open: Some(3), ..Behaviour::default() }).await;
    let report = run(&ramp(&server, "1:1:150ms", RampLimits::default())).await;
    assert_eq!(report.stop_reason, StopReason::Failure);
    assert_eq!(report.users, 3);
    assert_eq!(report.epochs.last().unwrap().users, 4);
}

/// A server that stops accepting for 0.8 s after its second connection, with a backlog of
/// one: connects made meanwhile beyond the queue have their SYN dropped and take about a
/// second (the SYN retransmission timeout).
async fn slow_accepting_server() -> TestServer {
    TestServer::start(Behaviour {
        accept_pause: Some((2, Duration::from_millis(800))),
        backlog: Some(1),
        ..Behaviour::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ramp_stops_when_the_average_connect_is_slow() {
    let server = slow_accepting_server().await;
    let limits = RampLimits {
        avg_connect: Duration::from_millis(150),
        max_connect: Duration::from_secs(60),
        ..RampLimits::default()
    };
    let report = run(&ramp(&server, "2:4:300ms", limits)).await;
    assert_eq!(report.stop_reason, StopReason::AvgConnect);
    assert!(report.users < report.epochs.last().unwrap().users);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ramp_stops_when_one_connect_is_slow() {
    let server = slow_accepting_server().await;
    let limits = RampLimits {
        avg_connect: Duration::from_secs(60),
        max_connect: Duration::from_millis(500),
        ..RampLimits::default()
    };
    let report = run(&ramp(&server, "2:4:300ms", limits)).await;
    assert_eq!(report.stop_reason, StopReason::MaxConnect);
    assert!(report.users < report.epochs.last().unwrap().users);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_has_the_required_keys() {
    let server = TestServer::start(Behaviour { body_len: 5, ..Behaviour::default() }).await;
    let (base, plan) = plan(&server, "/");
    let report = run(&bounded(base, plan, 1, 10)).await;
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    for key in [
        "requests",
        "errors",
        "throughput_rps",
        "throughput_mbps",
        "latency_ms",
        "connect_ms",
        "users",
        "epochs",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    for key in ["p50", "p90", "p99", "p999", "max"] {
        assert!(json["latency_ms"].get(key).is_some(), "missing latency_ms.{key}");
    }
    for key in ["avg", "max"] {
        assert!(json["connect_ms"].get(key).is_some(), "missing connect_ms.{key}");
    }
    assert_eq!(json["requests"], 10);
    assert!(json["epochs"].as_array().is_some_and(|e| !e.is_empty()));
    let html = bench::html::render_html(&report);
    assert!(html.contains("<svg") && !html.contains("http-equiv") && !html.contains("<script"));
}
