//! [`CREDENTIAL_PARAMETERS`]: the query and fragment parameter names whose value is a bearer
//! credential, each with the signing scheme or convention it comes from (BLOCK-04).
//!
//! Names are compared by their ASCII letters and digits alone, lowercased, so `X-Amz-Signature`,
//! `x_amz_signature` and `xAmzSignature` are one name, and `token[]`, `accessToken` and
//! `access-token` count as `token` and `access_token` do.
//!
//! `code` (an OAuth 2.0 authorization code, RFC 6749 §4.1.2) is deliberately not listed:
//! ordinary links use it (`?code=…` for a promo, a country, a snippet), and an authorization
//! code is single-use and worthless without the client's secret or its PKCE verifier. The same
//! reasoning leaves out `oauth_verifier` (OAuth 1.0a's single-use counterpart) and the
//! non-secret parts of signed URLs (`X-Amz-Date`, `Expires`, `Policy`, Azure's `sv`/`se`/`sp`,
//! Discord's `ex`/`is`), which name no secret on their own and appear in ordinary links.

/// One listed parameter name and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CredentialParameter {
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
pub const CREDENTIAL_PARAMETERS: &[CredentialParameter] = &[
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
pub fn normalize_name(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether `name` (as written in a uri, already percent-decoded) is on
/// [`CREDENTIAL_PARAMETERS`] once reduced to its letters and digits.
pub fn is_credential_parameter(name: &str) -> bool {
    let wanted = normalize_name(name);
    if wanted.is_empty() {
        return false;
    }
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
    fn block_04_list_has_a_source_for_every_name() {
        for param in CREDENTIAL_PARAMETERS {
            assert!(!param.source.is_empty());
            assert!(!normalize_name(param.name).is_empty());
        }
    }
}
