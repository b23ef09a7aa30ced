//! The MySQL client/server protocol without I/O (being written).
