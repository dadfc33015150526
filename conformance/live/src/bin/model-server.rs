//! The scripted model server ([`musewire_live::model_server`]) as a program, for benches run
//! by hand (`conformance/bench/acp.sh`): starts it on 127.0.0.1 at a free port, prints its base
//! URL (`http://127.0.0.1:PORT/v1`) on one line and serves until killed. With
//! `MUSEWIRE_MODEL_SERVER_LOG=FILE` it appends each streamed chunk's send time to FILE (the
//! format is in the module's docs).

use std::io::Write;

fn main() {
    let server = match musewire_live::model_server::ModelServer::start() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("model-server: {e}");
            std::process::exit(1);
        }
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{}", server.base_url());
    let _ = stdout.flush();
    loop {
        std::thread::park();
    }
}
