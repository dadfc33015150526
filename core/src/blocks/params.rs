//! Which query and fragment parameter names carry a bearer credential (BLOCK-04, BLOCK-07):
//! [`CREDENTIAL_PARAMETERS`], the names signing schemes and conventions use, each with its
//! source, and beyond the list, names matched by the words they are made of.
//!
//! # Listed names
//!
//! Names are compared by their ASCII letters and digits alone, lowercased, so `X-Amz-Signature`,
//! `x_amz_signature` and `xAmzSignature` are one name, and `token[]`, `accessToken` and
//! `access-token` count as `token` and `access_token` do.
//!
//! # Names matched by their words
//!
//! A name no list could finish (`auth_token`, `sessionToken`, `apiSecret`, `signing_key`, …) is
//! split into words, at every character that is not an ASCII letter or digit and at camelCase
//! humps (`sessionToken` → `session token`, `APIKey` → `api key`), and lowercased. It carries a
//! credential when one of its words:
//!
//! * is, or ends with, a word that always names a secret ([`SECRET_WORDS`]: `token`, `secret`,
//!   `password`, `passwd`, `signature`, `credential`, …), so `authtoken` and `apisecret`
//!   written solid count too;
//! * is a word that names a secret only on its own ([`WHOLE_SECRET_WORDS`]: `pwd`, `pass`,
//!   `sig`, `auth`, `bearer`, `ticket`, `jwt`, `session`, `sess`, `sid`, `sessid`, …), so
//!   `bypass`, `compass`, `sidebar` and `author` stay visible;
//! * is `key` with a qualifier ([`KEY_QUALIFIERS`]: `access`, `private`, `secret`, `api`,
//!   `client`, `signing`, `app`, …) as another word or written solid before it (`secret_key`,
//!   `accesskey`), so `monkey`, `keyboard`, `hotkey`, `sort_key` and `keywords` stay visible
//!   (the bare name `key` is listed);
//!
//! unless its last word says it describes the credential rather than holding it
//! ([`DESCRIPTOR_WORDS`]: `token_type`, `signature_method`, `SignatureVersion`, `token_count`).
//! Ordinary names (`page`, `sort`, `id`, `q`, `lang`, `v`, `usp`, `next`, `code`) are made of
//! none of these words.
//!
//! `code` (an OAuth 2.0 authorization code, RFC 6749 §4.1.2) is deliberately not listed:
//! ordinary links use it (`?code=…` for a promo, a country, a snippet), and an authorization
//! code is single-use and worthless without the client's secret or its PKCE verifier. The same
//! reasoning leaves out `oauth_verifier` (OAuth 1.0a's single-use counterpart) and the
//! non-secret parts of signed URLs (`X-Amz-Date`, `Expires`, `Policy`, Azure's `sv`/`se`/`sp`,
//! Discord's `ex`/`is`), which name no secret on their own and appear in ordinary links.

/// One listed parameter name and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CredentialParameter {
    /// The name as its scheme spells it.
    pub name: &'static str,
    /// The signing scheme or convention that puts a credential in it.
    pub source: &'static str,
}

const fn p(name: &'static str, source: &'static str) -> CredentialParameter {
    CredentialParameter { name, source }
}

/// Every parameter name whose value is treated as a bearer credential in a uri's query or
/// fragment. See the module docs for how names are compared and what is left out on purpose.
pub(crate) const CREDENTIAL_PARAMETERS: &[CredentialParameter] = &[
    // AWS Signature Version 4, query-string authentication (S3 presigned URLs and others).
    p(
        "X-Amz-Signature",
        "AWS SigV4 presigned URL: the request signature",
    ),
    p(
        "X-Amz-Credential",
        "AWS SigV4 presigned URL: access key id and scope",
    ),
    p(
        "X-Amz-Security-Token",
        "AWS SigV4/SigV2 presigned URL: STS session token",
    ),
    // AWS Signature Version 2, query-string authentication.
    p("AWSAccessKeyId", "AWS SigV2 presigned URL: access key id"),
    p(
        "Signature",
        "AWS SigV2, GCS V2 and CloudFront signed URLs: the signature",
    ),
    // Google Cloud Storage signed URLs.
    p(
        "X-Goog-Signature",
        "Google Cloud Storage V4 signed URL: the signature",
    ),
    p(
        "X-Goog-Credential",
        "Google Cloud Storage V4 signed URL: service account and scope",
    ),
    p(
        "GoogleAccessId",
        "Google Cloud Storage V2 signed URL: the signing account",
    ),
    // Azure Storage shared access signatures.
    p("sig", "Azure Storage SAS token: the signature"),
    // Amazon CloudFront signed URLs (Signature is listed above).
    p(
        "Key-Pair-Id",
        "Amazon CloudFront signed URL: the signing key pair",
    ),
    // Discord's CDN signed attachment URLs (ex and is are timestamps).
    p("hm", "Discord CDN signed attachment URL: the HMAC"),
    // Backblaze B2 download authorization.
    p(
        "Authorization",
        "Backblaze B2 download URL: b2_get_download_authorization token",
    ),
    // OAuth 2.0 (RFC 6749, RFC 6750 §2.3) and OpenID Connect.
    p(
        "access_token",
        "OAuth 2.0 bearer token in a URI (RFC 6750 §2.3), implicit-grant fragment",
    ),
    p("refresh_token", "OAuth 2.0 refresh token (RFC 6749 §6)"),
    p(
        "id_token",
        "OpenID Connect ID token (implicit and hybrid flows' fragment)",
    ),
    p("client_secret", "OAuth 2.0 client secret (RFC 6749 §2.3.1)"),
    // OAuth 1.0a (RFC 5849).
    p("oauth_token", "OAuth 1.0a token (RFC 5849 §3.1)"),
    p(
        "oauth_token_secret",
        "OAuth 1.0a token secret (RFC 5849 §2.3)",
    ),
    p(
        "oauth_signature",
        "OAuth 1.0a request signature (RFC 5849 §3.4)",
    ),
    p(
        "oauth_consumer_secret",
        "OAuth 1.0a consumer secret (PLAINTEXT signing)",
    ),
    // Generic names for API keys, tokens and passwords.
    p(
        "token",
        "generic bearer token (GitHub raw links, many APIs)",
    ),
    p("key", "generic API key (Google APIs' ?key=)"),
    p("api_key", "generic API key (also apikey, api-key, apiKey)"),
    p(
        "x-api-key",
        "API gateways' key header carried as a parameter",
    ),
    p("api_token", "generic API token"),
    p("private_token", "GitLab personal access token parameter"),
    p("auth", "Firebase Realtime Database REST ?auth= token"),
    p("jwt", "generic JSON Web Token parameter"),
    p("secret", "generic shared secret"),
    p("password", "generic password"),
    p("passwd", "generic password"),
    // Session identifiers, which are bearer credentials too.
    p("session_id", "a session's id (also sessionid, sessionId)"),
    p("jsessionid", "Java servlet session id"),
    p("phpsessid", "PHP session id"),
];

/// Reduces a parameter name to its ASCII letters and digits, lowercased: the form in which
/// names are compared.
pub(crate) fn normalize_name(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Words that name a secret wherever they stand in a name, alone or at the end of a word
/// written solid (`accesstoken`, `apisecret`).
pub(crate) const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "signature",
    "credential",
    "credentials",
    "apikey",
    "sessionid",
    "sessid",
];

/// Words that name a secret only as a whole word (`pass` but not `bypass`, `sid` but not
/// `sidebar`).
pub(crate) const WHOLE_SECRET_WORDS: &[&str] = &[
    "pwd", "pass", "sig", "auth", "bearer", "ticket", "jwt", "session", "sess", "sid", "hmac",
];

/// Words that make `key` a credential's name: `access_key`, `secretKey`, `signingkey`.
pub(crate) const KEY_QUALIFIERS: &[&str] = &[
    "access",
    "private",
    "secret",
    "api",
    "client",
    "signing",
    "sign",
    "app",
    "auth",
    "master",
    "account",
    "subscription",
    "license",
    "licence",
    "encryption",
    "shared",
    "consumer",
    "session",
    "security",
    "sas",
    "storage",
    "service",
    "developer",
    "dev",
    "user",
    "hmac",
    "webhook",
];

/// Last words by which a name describes a credential rather than holds one (`token_type`,
/// `signature_method`, `SignatureVersion`).
pub(crate) const DESCRIPTOR_WORDS: &[&str] = &[
    "type",
    "types",
    "hint",
    "method",
    "version",
    "alg",
    "algorithm",
    "expires",
    "expiry",
    "expiration",
    "ttl",
    "length",
    "count",
    "format",
    "name",
    "url",
    "uri",
    "endpoint",
    "required",
];

/// Whether `name` (as written in a uri, already percent-decoded) names a credential: it is on
/// [`CREDENTIAL_PARAMETERS`] once reduced to its letters and digits, or its words make it one
/// (see the module docs).
pub(crate) fn is_credential_parameter(name: &str) -> bool {
    let wanted = normalize_name(name);
    if wanted.is_empty() {
        return false;
    }
    is_listed(&wanted) || (may_hold_a_credential_word(&wanted) && words_name_a_credential(name))
}

/// A quick filter before the words are split: every word of the rule holds one of these
/// (`password` and `passwd` hold `pass`, `signature` holds `sig`, `session` holds `sess`), so
/// a name with none of them (`q`, `v`, `page`, `url`) is not split at all.
fn may_hold_a_credential_word(normalized: &str) -> bool {
    const PARTS: &[&str] = &[
        "token",
        "secret",
        "pass",
        "pwd",
        "sig",
        "auth",
        "bearer",
        "ticket",
        "jwt",
        "sess",
        "sid",
        "hmac",
        "key",
        "credential",
    ];
    PARTS.iter().any(|part| normalized.contains(part))
}

fn is_listed(wanted: &str) -> bool {
    CREDENTIAL_PARAMETERS.iter().any(|param| {
        let mut listed = param
            .name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase());
        let mut given = wanted.chars();
        loop {
            match (listed.next(), given.next()) {
                (None, None) => return true,
                (Some(a), Some(b)) if a == b => continue,
                _ => return false,
            }
        }
    })
}

/// Splits a name into lowercase words: at every character that is not an ASCII letter or
/// digit, before an uppercase letter that follows a lowercase one or a digit (`sessionToken`),
/// and before the last capital of a run followed by a lowercase letter (`APIKey` → `api key`).
pub(crate) fn name_words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !word.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                words.push(std::mem::take(&mut word));
            }
        }
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The word rule of the module docs.
fn words_name_a_credential(name: &str) -> bool {
    let words = name_words(name);
    let Some(last) = words.last() else {
        return false;
    };
    if DESCRIPTOR_WORDS.contains(&last.as_str()) {
        return false;
    }
    let qualified = |word: &str| KEY_QUALIFIERS.contains(&word);
    words.iter().enumerate().any(|(i, word)| {
        SECRET_WORDS.iter().any(|secret| word.ends_with(secret))
            || WHOLE_SECRET_WORDS.contains(&word.as_str())
            || (word == "key"
                && words
                    .iter()
                    .enumerate()
                    .any(|(j, w)| j != i && qualified(w)))
            || word.strip_suffix("key").is_some_and(qualified)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_04_names_compare_by_letters_and_digits() {
        for name in [
            "token",
            "token[]",
            "TOKEN",
            "accessToken",
            "access-token",
            "access_token",
            "X-Amz-Signature",
            "x_amz_signature",
            "api-key",
            "apiKey",
            "key-pair-id",
            "to\u{0}ken",
        ] {
            assert!(is_credential_parameter(name), "{name}");
        }
        for name in [
            "v", "usp", "code", "next", "q", "", "[]", "tokens", "monkey",
        ] {
            assert!(!is_credential_parameter(name), "{name}");
        }
    }

    #[test]
    fn block_07_the_quick_filter_passes_every_word_of_the_rule() {
        for word in SECRET_WORDS.iter().chain(WHOLE_SECRET_WORDS) {
            assert!(may_hold_a_credential_word(word), "{word}");
        }
        assert!(may_hold_a_credential_word("key"));
        assert!(!may_hold_a_credential_word("page"));
    }

    #[test]
    fn block_07_names_split_into_words() {
        assert_eq!(name_words("sessionToken"), ["session", "token"]);
        assert_eq!(name_words("APIKey"), ["api", "key"]);
        assert_eq!(name_words("X-Amz-Signature"), ["x", "amz", "signature"]);
        assert_eq!(name_words("oauth2Token[]"), ["oauth2", "token"]);
        assert_eq!(name_words("SECRET_KEY"), ["secret", "key"]);
        assert_eq!(name_words("__"), Vec::<String>::new());
    }

    #[test]
    fn block_07_credential_names_are_matched_by_their_words() {
        for name in [
            "auth_token",
            "authToken",
            "AUTHTOKEN",
            "sessionToken",
            "security_token",
            "sas_token",
            "secret_key",
            "secretkey",
            "access_key",
            "AccessKey",
            "private_key",
            "bearer_token",
            "apiSecret",
            "app_secret",
            "client_key",
            "signing_key",
            "signingKey",
            "sid",
            "SID",
            "sessid",
            "pwd",
            "pass",
            "ticket",
            "user_pass",
            "db-password",
            "githubToken",
            "aws_secret_access_key",
            "subscription-key",
            "session",
            "sig",
            "login_credentials",
            "auth",
        ] {
            assert!(is_credential_parameter(name), "{name}");
        }
    }

    #[test]
    fn block_07_ordinary_names_stay_visible() {
        for name in [
            "key-words",
            "keyword",
            "keywords",
            "keyboard",
            "monkey",
            "hotkey",
            "sort_key",
            "sortKey",
            "primary_key",
            "cache-key",
            "page",
            "sort",
            "id",
            "q",
            "lang",
            "v",
            "usp",
            "next",
            "code",
            "bypass",
            "compass",
            "passage",
            "sidebar",
            "side",
            "author",
            "authuser",
            "oauth",
            "design",
            "token_type",
            "token_type_hint",
            "oauth_signature_method",
            "SignatureVersion",
            "tokens",
            "tokenizer",
            "utm_source",
            "ref",
            "tab",
            "view",
            "format",
            "limit",
        ] {
            assert!(!is_credential_parameter(name), "{name}");
        }
    }

    #[test]
    fn block_04_list_has_a_source_for_every_name() {
        for param in CREDENTIAL_PARAMETERS {
            assert!(!param.source.is_empty());
            assert!(!normalize_name(param.name).is_empty());
        }
    }
}
