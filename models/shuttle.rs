#![cfg(feature = "shuttle")]
//! Shuttle tests (being written).
