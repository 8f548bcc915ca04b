//! The admin API, reload, drain, health checks and the load monitor.

use crate::support::{
    admin_get, admin_json, config, health_checked_config, stats_until, Backend, BackendOptions,
    Client, RunningRouter, LIMIT,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_metrics_and_targets() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let router = RunningRouter::start(config(&[&a, &b], "lard")).await;
    let mut client = Client::connect(router.addr).await;
    for i in 0..30 {
        client.get(if i % 3 == 0 { "/cold.html" } else { "/hot.html" }).await;
    }
    // The last response reaches the client just before the router books it as done.
    let settled = |s: &serde_json::Value| {
        s["nodes"].as_array().is_some_and(|n| n.iter().all(|n| n["in_flight"] == 0))
    };
    assert!(stats_until(&router, settled).await, "requests still in flight");
    let stats = admin_json(router.admin, "/stats").await;
    let nodes = stats["nodes"].as_array().unwrap();
    let total: u64 = nodes.iter().map(|n| n["requests"].as_u64().unwrap()).sum();
    assert_eq!(total, 30);
    assert!(nodes.iter().all(|n| n["up"] == true && n["in_flight"] == 0));
    assert_eq!(stats["policy"]["table_entries"], 2);
    let typed = wire::RouterStats::parse(stats.to_string().as_bytes()).unwrap();
    assert_eq!(typed.hot_targets[0].path, "/hot.html");
    let timed: u64 = typed.nodes.iter().map(|n| n.request_duration.count()).sum();
    assert_eq!(timed, 30, "every request is in a node's duration histogram");
    assert!(typed.nodes.iter().all(|n| n.state == wire::router_stats::NodeState::Up));

    let targets = admin_json(router.admin, "/targets?top=1").await;
    let list = targets["targets"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0]["path"].as_str(), list[0]["hits"].as_u64()), (Some("/hot.html"), Some(20)));
    assert_eq!(list[0]["nodes"].as_array().unwrap().len(), 1);

    let metrics = String::from_utf8(admin_get(router.admin, "/metrics").await.body).unwrap();
    assert!(metrics.contains("# TYPE larder_route_requests_total counter"), "{metrics}");
    assert!(metrics.contains("larder_route_up{node=\"a\"} 1.0"), "{metrics}");
    let hot_node = list[0]["nodes"][0].as_str().unwrap();
    let count = format!("larder_route_request_duration_seconds_count{{node=\"{hot_node}\"}} ");
    assert!(metrics.contains("# TYPE larder_route_request_duration_seconds histogram"));
    assert!(
        metrics.contains("larder_route_upstream_duration_seconds_bucket{node=\"a\",le=\"+Inf\"}")
    );
    let served: u64 = ["a", "b"]
        .iter()
        .map(|n| {
            let line = format!("larder_route_responses_total{{node=\"{n}\",class=\"2xx\"}} ");
            let at = metrics.find(&line).expect(&line) + line.len();
            metrics[at..].lines().next().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(served, 30, "{metrics}");
    assert!(metrics.contains(&count), "{metrics}");
    let page = admin_get(router.admin, "/").await;
    assert_eq!(page.status, 200);
    assert!(String::from_utf8(page.body).unwrap().contains("fetch(\"stats\""));
    assert_eq!(admin_get(router.admin, "/healthz").await.status, 200);
    assert_eq!(admin_get(router.admin, "/nope").await.status, 404);
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_adds_a_node_without_dropping_the_connection() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let router = RunningRouter::start(config(&[&a], "rr")).await;
    let mut client = Client::connect(router.addr).await;
    assert_eq!(client.get("/x").await.node(), "a");
    router.handle.reload(config(&[&a, &b], "rr")).unwrap();
    let nodes: Vec<String> = {
        let mut v = Vec::new();
        for _ in 0..4 {
            v.push(client.get("/x").await.node().to_string());
        }
        v
    };
    assert!(nodes.contains(&"a".to_string()) && nodes.contains(&"b".to_string()), "{nodes:?}");
    let mut bad = config(&[&a], "rr");
    bad.policy.t_low = bad.policy.t_high;
    assert!(router.handle.reload(bad).is_err(), "a bad config is refused, the old one stays");
    assert_eq!(client.get("/x").await.status, 200);
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_requests_in_flight() {
    let a = Backend::start_with("a", BackendOptions { gated: true, ..Default::default() }).await;
    let router = RunningRouter::start(config(&[&a], "rr")).await;
    let mut idle = Client::connect(router.addr).await;
    a.release(1);
    assert_eq!(idle.get("/warm").await.status, 200);
    assert_eq!(a.arrival().await, "/warm");
    let mut busy = Client::connect(router.addr).await;
    busy.send_raw(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n").await;
    assert_eq!(a.arrival().await, "/slow");

    let addr = router.addr;
    let stopping = tokio::spawn(router.stop());
    assert!(idle.closed().await, "an idle keep-alive connection is closed at once");
    a.release(1);
    let reply = busy.reply(false).await.expect("the request in flight completes");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("connection"), Some("close"));
    tokio::time::timeout(LIMIT, stopping).await.unwrap().unwrap();
    assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "no longer listening");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_router_stops_at_once() {
    let a = Backend::start("a").await;
    let mut cfg = config(&[&a], "rr");
    // Far beyond LIMIT: neither the drain deadline nor the idle timeout can end the wait,
    // only closing idle keep-alive connections as soon as the drain starts.
    cfg.timeouts.drain = std::time::Duration::from_millis(3_600_000);
    cfg.timeouts.idle = std::time::Duration::from_millis(3_600_000);
    let router = RunningRouter::start(cfg).await;
    let mut idle = Client::connect(router.addr).await;
    // One exchange: the client connection is now idle and an upstream one sits in the pool.
    assert_eq!(idle.get("/x").await.status, 200);
    let pooled = |s: &serde_json::Value| s["nodes"][0]["idle_connections"] == 1;
    assert!(stats_until(&router, pooled).await, "the upstream connection went to the pool");
    router.stop().await;
    assert!(idle.closed().await, "the idle keep-alive connection was closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ejected_node_comes_back_through_health_checks() {
    let a = Backend::start("a").await;
    let mut b = Backend::start("b").await;
    let b_addr = b.addr;
    let cfg = health_checked_config(&[&a, &b], "rr");
    let router = RunningRouter::start(cfg).await;
    b.kill().await;
    let mut client = Client::connect(router.addr).await;
    for _ in 0..6 {
        assert_eq!(client.get("/x").await.node(), "a", "b is down: connect fails, GET retried");
    }
    assert!(stats_until(&router, |s| s["nodes"][1]["up"] == false).await);

    // A new process on the same address: checks pass, the node returns and gets traffic.
    let back = Backend::start_on("b", b_addr).await;
    assert!(stats_until(&router, |s| s["nodes"][1]["up"] == true).await, "node b came back");
    let mut seen_b = false;
    for _ in 0..20 {
        seen_b |= client.get("/x").await.node() == "b";
    }
    assert!(seen_b, "targets return to a node that came back");
    assert!(!back.seen().is_empty());
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_load_monitor_folds_reports_into_the_load() {
    let options = BackendOptions { cpu_pct: Some(80.0), ..Default::default() };
    let a = Backend::start_with("a", options).await;
    let mut cfg = config(&[&a], "rr");
    cfg.nodes[0].load_report = true;
    cfg.load.poll = std::time::Duration::from_millis(20);
    cfg.load.w_cpu = 0.5;
    let router = RunningRouter::start(cfg).await;
    let reported =
        stats_until(&router, |s| s["nodes"][0]["cpu_pct"] == 80.0 && s["nodes"][0]["load"] == 40.0)
            .await;
    assert!(reported, "cpu 80% at weight 0.5 is load 40");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_access_log_has_one_combined_line_per_request() {
    let a = Backend::start("a").await;
    let path = std::env::temp_dir().join(format!("larder-route-access-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut cfg = config(&[&a], "rr");
    cfg.access_log = Some(path.to_str().unwrap().to_string());
    let router = RunningRouter::start(cfg).await;
    let mut client = Client::connect(router.addr).await;
    client
        .send_raw(b"GET /logged.html HTTP/1.1\r\nHost: t\r\nReferer: http://r/\r\nUser-Agent: ua/1\r\n\r\n")
        .await;
    assert_eq!(client.reply(false).await.unwrap().status, 200);
    client.send_raw(b"GET /bad HTTP/1.1\r\nHost: t\r\nContent-Length: x\r\n\r\n").await;
    assert_eq!(client.reply(false).await.unwrap().status, 400);
    router.stop().await; // flushes the log
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "a request refused before parsing completes is not logged: {text}");
    let line = lines[0];
    assert!(line.starts_with("127.0.0.1 - - ["), "{line}");
    assert!(line.contains("] \"GET /logged.html HTTP/1.1\" 200 "), "{line}");
    assert!(line.contains(" \"http://r/\" \"ua/1\" a "), "{line}");
    let _ = std::fs::remove_file(&path);
}
