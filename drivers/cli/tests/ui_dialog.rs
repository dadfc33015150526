//! HOST-06 live on both drivers: the bundled agent's `ask` tool opens a `confirm` dialog; the
//! host's UI handler answers it, and the model's reply shows the answer.

use std::time::{Duration, Instant};

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_wire::{UiRequest, UiResponse};

const WAIT: Duration = Duration::from_secs(60);

fn agent_command() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_musewire"));
    command.args(["agent", "--mode", "rpc"]);
    command
}

fn answer(request: &UiRequest, confirmed: bool) -> Option<UiResponse> {
    let id = request.id()?;
    Some(if confirmed {
        UiResponse::confirm(id)
    } else {
        UiResponse::cancelled(id)
    })
}

fn text_of(events: &[ClientEvent]) -> String {
    events.iter().filter_map(ClientEvent::text_delta).collect()
}

#[test]
fn host_06_mio_ui_handler_answers_the_agents_dialog() {
    for (confirmed, said) in [(true, "ask returned: yes"), (false, "ask returned: no")] {
        let agent =
            musewire_mio::AgentProcess::spawn(agent_command(), ClientConfig::default()).unwrap();
        agent.on_ui(move |request| {
            let UiRequest::Confirm(confirm) = &request else {
                panic!("not a confirm dialog: {request:?}")
            };
            assert_eq!(confirm.title, "Ship it?");
            answer(&request, confirmed)
        });
        agent.prompt("ask Ship it?", WAIT).unwrap();
        let deadline = Instant::now() + WAIT;
        let mut events = Vec::new();
        loop {
            let event = agent
                .next_event(deadline.saturating_duration_since(Instant::now()))
                .expect("the turn ends");
            let done = matches!(event, ClientEvent::TurnFinished);
            assert!(
                !matches!(event, ClientEvent::UiRequest { .. }),
                "the handler took the dialog"
            );
            events.push(event);
            if done {
                break;
            }
        }
        assert!(text_of(&events).ends_with(said), "{}", text_of(&events));
        agent.shutdown(Duration::from_secs(5)).unwrap();
    }
}

#[test]
fn host_06_smol_ui_handler_answers_the_agents_dialog() {
    smol::block_on(async {
        let agent = musewire_smol::AgentProcess::spawn(
            smol::process::Command::from(agent_command()),
            ClientConfig::default(),
        )
        .unwrap();
        agent.on_ui(|request| async move {
            assert_eq!(request.method(), Some("confirm"));
            answer(&request, true)
        });
        agent.prompt("ask Ship it?").await.unwrap();
        let mut events = Vec::new();
        let turn = async {
            while let Some(event) = agent.next_event().await {
                let done = matches!(event, ClientEvent::TurnFinished);
                events.push(event);
                if done {
                    break;
                }
            }
        };
        smol::future::or(turn, async {
            smol::Timer::after(WAIT).await;
            panic!("the turn did not end")
        })
        .await;
        assert!(
            text_of(&events).ends_with("ask returned: yes"),
            "{}",
            text_of(&events)
        );
        agent.shutdown(Duration::from_secs(5)).await.unwrap();
    });
}
