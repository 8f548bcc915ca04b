//! The flags that put a cluster on hosts of their own, shared by `larder up` and
//! `larder bench experiment`.

use lab::{HostsConfig, LinkShape, Queue, Rate, Subnet};

#[derive(clap::Args, Debug)]
pub struct HostsArgs {
    /// Start every node, router, origin and the load generator on a host of its own: a
    /// network namespace with its own address on a bridge of the run's own, each host's
    /// link shaped (--link-rate, --link-queue), so the cluster has a network between its
    /// hosts as a real one has. Needs root and iproute2 (`ip`, `tc`). Everything is
    /// removed on exit, on Ctrl-C, and by the next run if this one is killed. The
    /// cluster's addresses are reached from the client host: `ip netns exec
    /// larder-PID-client COMMAND`.
    #[arg(long)]
    pub hosts: bool,
    /// With --hosts: the private subnet the hosts' addresses come from (10/8, 172.16/12 or
    /// 192.168/16); it exists only on the run's own bridge.
    #[arg(long, value_name = "CIDR", default_value = "10.77.0.0/24", requires = "hosts")]
    pub hosts_subnet: Subnet,
    /// With --hosts: every host's link rate each way (tc HTB), e.g. 100mbit, 1gbit. An
    /// experiment takes several, comma separated, and runs every system at each.
    #[arg(
        long,
        value_name = "RATE",
        default_value = "1gbit",
        requires = "hosts",
        value_delimiter = ','
    )]
    pub link_rate: Vec<Rate>,
    /// With --hosts: the queue at each end of every link, in packets (1000p) or bytes
    /// (256KiB); beyond it, packets are dropped.
    #[arg(long, value_name = "QUEUE", default_value = "1000p", requires = "hosts")]
    pub link_queue: Queue,
    /// With --hosts: the client host's link rate (where `larder bench` and `curl` run),
    /// when the client side should be wider than one host, as a site's many clients are;
    /// it keeps --link-queue. Default is the link every host has.
    #[arg(long, value_name = "RATE", requires = "hosts")]
    pub client_link_rate: Option<Rate>,
}

impl HostsArgs {
    /// The hosts' network (None without --hosts), its link at the first rate given.
    pub fn config(&self) -> Option<HostsConfig> {
        let rate = self.link_rate.first().copied().unwrap_or(LinkShape::default().rate);
        self.hosts.then_some(HostsConfig {
            subnet: self.hosts_subnet,
            link: LinkShape { rate, queue: self.link_queue },
            client_link: self
                .client_link_rate
                .map(|rate| LinkShape { rate, queue: self.link_queue }),
        })
    }
}
