//! `informer-testserver`: an in-memory Kubernetes API server on 127.0.0.1.
//!
//! Prints `listening on http://127.0.0.1:PORT` as its first line and serves until Ctrl-C.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use informer_testserver::TestServer;
use informer_testserver::kubelet::Kubelet;

/// An in-memory Kubernetes API server for tests and demos.
#[derive(Debug, Parser)]
#[command(name = "informer-testserver", version, about)]
struct Args {
    /// Port to listen on at 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Objects to create at start: YAML or JSON, a `List` or several `---` documents.
    #[arg(long)]
    seed: Option<PathBuf>,
    /// Create a missing namespace when an object is created in it (without this, such a create
    /// is refused with 404, as kube-apiserver refuses it).
    #[arg(long)]
    auto_create_namespaces: bool,
    /// Run a simulated kubelet and scheduler with this many Ready nodes (`node-1`, ...): pods
    /// are scheduled, run and become Ready, and deleting one is graceful.
    #[arg(long)]
    nodes: Option<usize>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let mut builder = TestServer::builder()
        .port(args.port)
        .auto_create_namespaces(args.auto_create_namespaces);
    if let Some(nodes) = args.nodes {
        builder = builder.kubelet(Kubelet::with_nodes(nodes));
    }
    let server = builder.start().await?;
    if let Some(seed) = &args.seed {
        server.seed_file(seed)?;
    }
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.url())?;
    stdout.flush()?;
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(())
}
