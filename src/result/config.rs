//! How each command was configured, as the result records it.
