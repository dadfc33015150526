//! Property tests for BLOCK-04 and BLOCK-06: no value of a listed parameter ever appears in
//! either copy of a result, for generated uris carrying one at any level of nesting and
//! encoding; and uris carrying none keep showing.

/// Named `blocks::…` so that `cargo test -p musewire-core blocks` selects these tests.
mod blocks {

    use crate::blocks::params::CREDENTIAL_PARAMETERS;
    use crate::blocks::{
        show_tool_result, uri_may_carry_credential, LiveBlock, RawToolResult, Shown, Source,
    };
    use proptest::prelude::*;
    use serde_json::{json, Value};

    fn enc(s: &str) -> String {
        let mut out = String::new();
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    }

    fn enc_n(s: &str, times: usize) -> String {
        (0..times).fold(s.to_owned(), |acc, _| enc(&acc))
    }

    /// A listed name as a uri might spell it: case, separators, `[]`, some characters encoded.
    fn name_variant(name: &str, style: u8, encode_mask: u32) -> String {
        let base: String = match style % 6 {
            0 => name.to_owned(),
            1 => name.to_ascii_lowercase(),
            2 => name.to_ascii_uppercase(),
            3 => name.replace(['-', '_'], ""),
            4 => name.replace('_', "-").replace('-', "_"),
            _ => format!("{name}[]"),
        };
        base.chars()
            .enumerate()
            .map(|(i, c)| {
                if c.is_ascii_alphanumeric() && encode_mask & (1 << (i % 32)) != 0 {
                    format!("%{:02X}", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect()
    }

    #[derive(Debug, Clone)]
    struct Wrap {
        host: usize,
        param: usize,
        times: usize,
    }

    const HOSTS: [&str; 4] = [
        "https://site.example/_next/image",
        "https://www.google.com/url",
        "https://app.example/login",
        "//cdn.example/proxy",
    ];
    /// BLOCK-07: names matched by their words, not by the list.
    const WORD_MATCHED: [&str; 18] = [
        "auth_token",
        "authToken",
        "sessionToken",
        "security_token",
        "sas_token",
        "secret_key",
        "access_key",
        "private_key",
        "bearer_token",
        "apiSecret",
        "app_secret",
        "client_key",
        "signing_key",
        "sid",
        "sessid",
        "pwd",
        "pass",
        "ticket",
    ];

    /// A listed name, or one matched by its words.
    fn credential_name(which: usize) -> &'static str {
        CREDENTIAL_PARAMETERS.get(which).map_or_else(
            || WORD_MATCHED[which - CREDENTIAL_PARAMETERS.len()],
            |p| p.name,
        )
    }

    const BENIGN: [&str; 8] = ["url", "next", "q", "u", "redirect", "v", "usp", "code"];

    fn wrap_strategy() -> impl Strategy<Value = Wrap> {
        (0..HOSTS.len(), 0..BENIGN.len(), 0usize..3).prop_map(|(host, param, times)| Wrap {
            host,
            param,
            times,
        })
    }

    /// The innermost uri: the secret as a listed parameter's value (in the query, the fragment,
    /// a fragment route, after `;` or `?`) or as userinfo.
    fn inner_uri(
        secret: &str,
        listed: &str,
        place: u8,
        benign: &[(usize, String)],
        relative: bool,
    ) -> String {
        let mut others = String::new();
        for (name, value) in benign {
            others.push_str(&format!("{}={}&", BENIGN[*name], value));
        }
        let origin = if relative {
            ""
        } else {
            "https://files.example"
        };
        match place % 7 {
            0 => format!("{origin}/a/b.png?{others}{listed}={secret}"),
            1 => format!("{origin}/a/b.png?{others}x=1;{listed}={secret}"),
            2 => format!("{origin}/a/b.png#{others}{listed}={secret}"),
            3 => format!("{origin}/a/b.png#/reset?{listed}={secret}"),
            4 => format!("{origin}/a/b.png?{others}q=x?{listed}={secret}"),
            5 => format!("https://user:{secret}@files.example/a/b.png?{others}"),
            _ => format!("{origin}/app;{listed}={secret}"),
        }
    }

    fn all_text(shown: &Shown) -> String {
        let mut text = shown.copies.stored.clone();
        for block in &shown.copies.live {
            match block {
                LiveBlock::Text { text: t } => text.push_str(t),
                LiveBlock::Image { data, mime_type } => {
                    text.push_str(data);
                    text.push_str(mime_type);
                }
            }
        }
        text
    }

    fn sources() -> [Source<'static>; 4] {
        [
            Source::Local,
            Source::UnknownServer { id: "gone" },
            Source::Server {
                id: "stdio",
                address: None,
            },
            Source::Server {
                id: "web",
                address: Some("https://files.example/mcp"),
            },
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
            .. ProptestConfig::default()
        })]

        /// BLOCK-04, BLOCK-06, BLOCK-07: a listed parameter's value (or one whose name is
        /// matched by its words) never reaches either copy, whatever the
        /// nesting (up to five wraps, each percent-encoded up to twice) and wherever the block sits.
        #[test]
        fn block_04_listed_values_never_show(
            secret in "Zq[A-Za-z0-9]{10,20}",
            which in 0..CREDENTIAL_PARAMETERS.len() + WORD_MATCHED.len(),
            style in any::<u8>(),
            encode_mask in any::<u32>(),
            place in any::<u8>(),
            relative in any::<bool>(),
            benign in prop::collection::vec((0..BENIGN.len(), "[a-z0-9]{1,8}"), 0..3),
            wraps in prop::collection::vec(wrap_strategy(), 0..5),
            name_is_uri in any::<bool>(),
            with_image in any::<bool>(),
            cap in 50usize..5000,
        ) {
            let listed = name_variant(credential_name(which), style, encode_mask);
            let mut uri = inner_uri(&secret, &listed, place, &benign, relative && wraps.is_empty());
            for wrap in &wraps {
                uri = format!("{}?w=640&{}={}", HOSTS[wrap.host], BENIGN[wrap.param], enc_n(&uri, wrap.times));
            }
            prop_assert!(uri.contains(&secret));
            prop_assert!(uri_may_carry_credential(&uri), "{}", uri);

            let name = if name_is_uri { uri.clone() } else { "photo.png".to_owned() };
            let mut content = vec![
                json!({"type": "text", "text": "before"}),
                json!({"type": "resource_link", "name": name, "uri": uri, "mimeType": "image/png"}),
                json!({"type": "video", "uri": uri}),
                json!({"type": "audio", "data": "AAAA", "uri": uri}),
            ];
            if with_image {
                content.push(json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}));
            }
            for source in sources() {
                let result = RawToolResult { content: Value::Array(content.clone()), is_error: false, data_is_content: true };
                let shown = show_tool_result(&result, &source, cap);
                prop_assert!(!all_text(&shown).contains(&secret), "{}: {}", uri, shown.copies.stored);
                // The same link nested in a module's data.
                let data = RawToolResult { content: json!({"items": [content[1].clone()]}), is_error: false, data_is_content: false };
                let shown = show_tool_result(&data, &source, cap);
                prop_assert!(!all_text(&shown).contains(&secret), "{}: {}", uri, shown.copies.stored);
            }
        }

        /// BLOCK-04: uris whose parameters are all unlisted, and whose values aren't uris, show.
        #[test]
        fn block_04_ordinary_links_show(
            path in "[a-z0-9/._-]{0,20}",
            params in prop::collection::vec((0..BENIGN.len(), "[A-Za-z0-9._~-]{0,12}"), 0..4),
            fragment in prop::option::of("[a-z0-9_-]{1,12}"),
        ) {
            let mut uri = format!("https://docs.example/{path}");
            if !params.is_empty() {
                let query: Vec<String> = params.iter().map(|(n, v)| format!("{}={v}", BENIGN[*n])).collect();
                uri.push('?');
                uri.push_str(&query.join("&"));
            }
            if let Some(fragment) = fragment {
                uri.push('#');
                uri.push_str(&fragment);
            }
            prop_assert!(!uri_may_carry_credential(&uri), "{}", uri);
            let result = RawToolResult { content: json!([{"type": "resource_link", "name": "d", "uri": uri}]), is_error: false, data_is_content: true };
            let shown = show_tool_result(&result, &Source::Local, 50_000);
            prop_assert_eq!(shown.copies.stored, format!("[resource link \"d\": {uri}; not fetched]"));
        }

        /// The check never panics and is deterministic on arbitrary text.
        #[test]
        fn block_04_arbitrary_text(text in "\\PC{0,200}") {
            prop_assert_eq!(uri_may_carry_credential(&text), uri_may_carry_credential(&text));
        }
    }
}
