//! What the ranks send each other is JSON; a message that does not encode
//! or decode ends the exchange with an error naming what was sent and
//! why, never with an empty default that the job would go on with (a rank
//! with no hosts, no targets, no verdict).

use serde::Serialize;
use serde::de::DeserializeOwned;

/// `value` as the bytes of a message; `what` names it in the error.
pub fn encode<T: Serialize>(value: &T, what: &str) -> Result<Vec<u8>, String> {
    serde_json::to_vec(value).map_err(|e| format!("{what} could not be encoded: {e}"))
}

/// A message's bytes as `T`; `what` names it in the error (`rank 2's
/// identity did not arrive whole: …`).
pub fn decode<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("{what} did not arrive whole: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_message_is_an_error_naming_it() {
        let bytes = encode(&vec!["node-a".to_string()], "the host names").unwrap();
        let back: Vec<String> = decode(&bytes, "the host names").unwrap();
        assert_eq!(back, ["node-a"]);
        let e = decode::<Vec<String>>(&bytes[..3], "the host names").unwrap_err();
        assert!(
            e.starts_with("the host names did not arrive whole: "),
            "{e}"
        );
    }
}
