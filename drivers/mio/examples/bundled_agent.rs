//! The bundled agent (`musewire agent --mode rpc`, default options) as a program of this
//! crate: this crate's tests run it as their agent (`tests/common`). Built with the tests
//! (`cargo test -p musewire-mio` builds the examples); its arguments are ignored.
fn main() -> std::process::ExitCode {
    let code = musewire_agent::stdio::run(musewire_agent::Options::default())
        .expect("the bundled agent runs");
    std::process::ExitCode::from(code)
}
