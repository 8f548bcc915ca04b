//! A tiny authoritative DNS server on 127.0.0.1:0 (UDP) for discovery tests: it answers
//! A and SRV queries from a table the test changes while the router runs, or answers
//! every query SERVFAIL while told to fail. Messages are encoded by hickory-proto.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::rdata::{A, SRV};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use tokio::net::UdpSocket;

/// TTL of every record unless the test sets another (long: refreshes then follow
/// `refresh_ms`).
const TTL: u32 = 300;

struct Table {
    a: HashMap<String, Vec<Ipv4Addr>>,
    srv: HashMap<String, Vec<(String, u16)>>,
    ttl: u32,
    failing: bool,
    queries: u64,
}

pub struct DnsServer {
    pub addr: SocketAddr,
    table: Arc<Mutex<Table>>,
    task: tokio::task::JoinHandle<()>,
}

impl DnsServer {
    pub async fn start() -> DnsServer {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        let table = Arc::new(Mutex::new(Table {
            a: HashMap::new(),
            srv: HashMap::new(),
            ttl: TTL,
            failing: false,
            queries: 0,
        }));
        let t = table.clone();
        let task = tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            loop {
                let Ok((len, peer)) = socket.recv_from(&mut buf).await else { continue };
                let Some(reply) = answer(&buf[..len], &t) else { continue };
                let _ = socket.send_to(&reply, peer).await;
            }
        });
        DnsServer { addr, table, task }
    }

    /// `name`'s A records are now `ips` (none: the name has no A records).
    pub fn set_a(&self, name: &str, ips: &[Ipv4Addr]) {
        self.table.lock().unwrap().a.insert(key(name), ips.to_vec());
    }

    /// `name`'s SRV records are now `targets` (target name, port).
    pub fn set_srv(&self, name: &str, targets: &[(&str, u16)]) {
        let targets = targets.iter().map(|(t, p)| (t.to_string(), *p)).collect();
        self.table.lock().unwrap().srv.insert(key(name), targets);
    }

    /// Every record's TTL from now on, in seconds.
    pub fn set_ttl(&self, secs: u32) {
        self.table.lock().unwrap().ttl = secs;
    }

    /// While `failing`, every query gets SERVFAIL.
    pub fn set_failing(&self, failing: bool) {
        self.table.lock().unwrap().failing = failing;
    }

    /// Queries answered so far.
    pub fn queries(&self) -> u64 {
        self.table.lock().unwrap().queries
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn key(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// The reply to one query message; `None` for what is not a query.
fn answer(bytes: &[u8], table: &Mutex<Table>) -> Option<Vec<u8>> {
    let request = Message::from_vec(bytes).ok()?;
    let query = request.queries().first()?.clone();
    let mut reply = Message::new();
    reply
        .set_id(request.id())
        .set_message_type(MessageType::Response)
        .set_op_code(request.op_code())
        .set_recursion_desired(request.recursion_desired())
        .set_recursion_available(true)
        .set_authoritative(true);
    let mut t = table.lock().unwrap();
    t.queries += 1;
    let name = key(&query.name().to_utf8());
    if t.failing {
        reply.set_response_code(ResponseCode::ServFail);
    } else {
        match query.query_type() {
            RecordType::A => {
                for ip in t.a.get(&name).into_iter().flatten() {
                    reply.add_answer(Record::from_rdata(
                        query.name().clone(),
                        t.ttl,
                        RData::A(A(*ip)),
                    ));
                }
            }
            RecordType::SRV => {
                for (target, port) in t.srv.get(&name).into_iter().flatten() {
                    let target = Name::from_str(&format!("{target}.")).unwrap();
                    let srv = SRV::new(0, 1, *port, target);
                    reply.add_answer(Record::from_rdata(
                        query.name().clone(),
                        t.ttl,
                        RData::SRV(srv),
                    ));
                }
            }
            _ => {}
        }
        reply.set_response_code(ResponseCode::NoError);
    }
    reply.add_query(query);
    reply.to_vec().ok()
}
