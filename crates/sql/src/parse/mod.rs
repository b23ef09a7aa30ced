//! Parsing (being written).
