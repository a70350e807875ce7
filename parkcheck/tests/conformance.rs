//! The conformance suite: written in the next commit.
