//! Numeric constants of the protocol: capability flags, server status flags, column types,
//! column flags, command codes, character set ids and auth plugin names.
//!
//! Invariant: values are the wire values used by MySQL 8.0 (and MariaDB where they agree);
//! [`SERVER_CAPABILITIES`] is exactly what this server advertises without TLS (add
//! [`CLIENT_SSL`] when TLS is configured).

// Capability flags (handshake, 32 bits).
pub const CLIENT_LONG_PASSWORD: u32 = 1;
pub const CLIENT_FOUND_ROWS: u32 = 1 << 1;
pub const CLIENT_LONG_FLAG: u32 = 1 << 2;
pub const CLIENT_CONNECT_WITH_DB: u32 = 1 << 3;
pub const CLIENT_NO_SCHEMA: u32 = 1 << 4;
pub const CLIENT_COMPRESS: u32 = 1 << 5;
pub const CLIENT_ODBC: u32 = 1 << 6;
pub const CLIENT_LOCAL_FILES: u32 = 1 << 7;
pub const CLIENT_IGNORE_SPACE: u32 = 1 << 8;
pub const CLIENT_PROTOCOL_41: u32 = 1 << 9;
pub const CLIENT_INTERACTIVE: u32 = 1 << 10;
pub const CLIENT_SSL: u32 = 1 << 11;
pub const CLIENT_IGNORE_SIGPIPE: u32 = 1 << 12;
pub const CLIENT_TRANSACTIONS: u32 = 1 << 13;
pub const CLIENT_RESERVED: u32 = 1 << 14;
pub const CLIENT_SECURE_CONNECTION: u32 = 1 << 15;
pub const CLIENT_MULTI_STATEMENTS: u32 = 1 << 16;
pub const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
pub const CLIENT_PS_MULTI_RESULTS: u32 = 1 << 18;
pub const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
pub const CLIENT_CONNECT_ATTRS: u32 = 1 << 20;
pub const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
pub const CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS: u32 = 1 << 22;
pub const CLIENT_SESSION_TRACK: u32 = 1 << 23;
pub const CLIENT_DEPRECATE_EOF: u32 = 1 << 24;
pub const CLIENT_OPTIONAL_RESULTSET_METADATA: u32 = 1 << 25;
pub const CLIENT_ZSTD_COMPRESSION_ALGORITHM: u32 = 1 << 26;
pub const CLIENT_QUERY_ATTRIBUTES: u32 = 1 << 27;
pub const CLIENT_MULTI_FACTOR_AUTHENTICATION: u32 = 1 << 28;
pub const CLIENT_CAPABILITY_EXTENSION: u32 = 1 << 29;
pub const CLIENT_SSL_VERIFY_SERVER_CERT: u32 = 1 << 30;
pub const CLIENT_REMEMBER_OPTIONS: u32 = 1 << 31;

/// What the server advertises (without TLS). LOCAL_FILES as mysqld: whether LOAD DATA LOCAL
/// may ask for a file is local_infile's say. Not advertised on purpose: COMPRESS,
/// SESSION_TRACK (OK packets here carry `info` as a plain trailing string),
/// QUERY_ATTRIBUTES (COM_QUERY payloads are then the bare query), OPTIONAL_RESULTSET_METADATA.
/// Setting LONG_PASSWORD also tells MariaDB clients this is not a MariaDB server.
pub const SERVER_CAPABILITIES: u32 = CLIENT_LONG_PASSWORD
    | CLIENT_FOUND_ROWS
    | CLIENT_LOCAL_FILES
    | CLIENT_LONG_FLAG
    | CLIENT_CONNECT_WITH_DB
    | CLIENT_IGNORE_SPACE
    | CLIENT_PROTOCOL_41
    | CLIENT_INTERACTIVE
    | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION
    | CLIENT_MULTI_STATEMENTS
    | CLIENT_MULTI_RESULTS
    | CLIENT_PS_MULTI_RESULTS
    | CLIENT_PLUGIN_AUTH
    | CLIENT_CONNECT_ATTRS
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
    | CLIENT_DEPRECATE_EOF;

// Server status flags (OK, EOF and the greeting).
pub const SERVER_STATUS_IN_TRANS: u16 = 1;
pub const SERVER_STATUS_AUTOCOMMIT: u16 = 1 << 1;
pub const SERVER_MORE_RESULTS_EXISTS: u16 = 1 << 3;
pub const SERVER_QUERY_NO_GOOD_INDEX_USED: u16 = 1 << 4;
pub const SERVER_QUERY_NO_INDEX_USED: u16 = 1 << 5;
pub const SERVER_STATUS_CURSOR_EXISTS: u16 = 1 << 6;
pub const SERVER_STATUS_LAST_ROW_SENT: u16 = 1 << 7;
pub const SERVER_STATUS_DB_DROPPED: u16 = 1 << 8;
pub const SERVER_STATUS_NO_BACKSLASH_ESCAPES: u16 = 1 << 9;
pub const SERVER_STATUS_METADATA_CHANGED: u16 = 1 << 10;
pub const SERVER_QUERY_WAS_SLOW: u16 = 1 << 11;
pub const SERVER_PS_OUT_PARAMS: u16 = 1 << 12;
pub const SERVER_STATUS_IN_TRANS_READONLY: u16 = 1 << 13;
pub const SERVER_SESSION_STATE_CHANGED: u16 = 1 << 14;

// Column types (column definitions and binary-protocol parameter types).
pub const MYSQL_TYPE_DECIMAL: u8 = 0;
pub const MYSQL_TYPE_TINY: u8 = 1;
pub const MYSQL_TYPE_SHORT: u8 = 2;
pub const MYSQL_TYPE_LONG: u8 = 3;
pub const MYSQL_TYPE_FLOAT: u8 = 4;
pub const MYSQL_TYPE_DOUBLE: u8 = 5;
pub const MYSQL_TYPE_NULL: u8 = 6;
pub const MYSQL_TYPE_TIMESTAMP: u8 = 7;
pub const MYSQL_TYPE_LONGLONG: u8 = 8;
pub const MYSQL_TYPE_INT24: u8 = 9;
pub const MYSQL_TYPE_DATE: u8 = 10;
pub const MYSQL_TYPE_TIME: u8 = 11;
pub const MYSQL_TYPE_DATETIME: u8 = 12;
pub const MYSQL_TYPE_YEAR: u8 = 13;
pub const MYSQL_TYPE_NEWDATE: u8 = 14;
pub const MYSQL_TYPE_VARCHAR: u8 = 15;
pub const MYSQL_TYPE_BIT: u8 = 16;
pub const MYSQL_TYPE_TIMESTAMP2: u8 = 17;
pub const MYSQL_TYPE_DATETIME2: u8 = 18;
pub const MYSQL_TYPE_TIME2: u8 = 19;
pub const MYSQL_TYPE_JSON: u8 = 245;
pub const MYSQL_TYPE_NEWDECIMAL: u8 = 246;
pub const MYSQL_TYPE_ENUM: u8 = 247;
pub const MYSQL_TYPE_SET: u8 = 248;
pub const MYSQL_TYPE_TINY_BLOB: u8 = 249;
pub const MYSQL_TYPE_MEDIUM_BLOB: u8 = 250;
pub const MYSQL_TYPE_LONG_BLOB: u8 = 251;
pub const MYSQL_TYPE_BLOB: u8 = 252;
pub const MYSQL_TYPE_VAR_STRING: u8 = 253;
pub const MYSQL_TYPE_STRING: u8 = 254;
pub const MYSQL_TYPE_GEOMETRY: u8 = 255;

// Column definition flags.
pub const NOT_NULL_FLAG: u16 = 1;
pub const PRI_KEY_FLAG: u16 = 1 << 1;
pub const UNIQUE_KEY_FLAG: u16 = 1 << 2;
pub const MULTIPLE_KEY_FLAG: u16 = 1 << 3;
pub const BLOB_FLAG: u16 = 1 << 4;
pub const UNSIGNED_FLAG: u16 = 1 << 5;
pub const ZEROFILL_FLAG: u16 = 1 << 6;
pub const BINARY_FLAG: u16 = 1 << 7;
pub const ENUM_FLAG: u16 = 1 << 8;
pub const AUTO_INCREMENT_FLAG: u16 = 1 << 9;
pub const TIMESTAMP_FLAG: u16 = 1 << 10;
pub const SET_FLAG: u16 = 1 << 11;
pub const NO_DEFAULT_VALUE_FLAG: u16 = 1 << 12;
pub const ON_UPDATE_NOW_FLAG: u16 = 1 << 13;
pub const PART_KEY_FLAG: u16 = 1 << 14;
pub const NUM_FLAG: u16 = 1 << 15;

/// Parameter flag in COM_STMT_EXECUTE type pairs.
pub const PARAM_UNSIGNED: u8 = 0x80;

// Command codes (first byte of a command payload).
pub const COM_SLEEP: u8 = 0x00;
pub const COM_QUIT: u8 = 0x01;
pub const COM_INIT_DB: u8 = 0x02;
pub const COM_QUERY: u8 = 0x03;
pub const COM_FIELD_LIST: u8 = 0x04;
pub const COM_CREATE_DB: u8 = 0x05;
pub const COM_DROP_DB: u8 = 0x06;
pub const COM_REFRESH: u8 = 0x07;
pub const COM_SHUTDOWN: u8 = 0x08;
pub const COM_STATISTICS: u8 = 0x09;
pub const COM_PROCESS_INFO: u8 = 0x0a;
pub const COM_CONNECT: u8 = 0x0b;
pub const COM_PROCESS_KILL: u8 = 0x0c;
pub const COM_DEBUG: u8 = 0x0d;
pub const COM_PING: u8 = 0x0e;
pub const COM_TIME: u8 = 0x0f;
pub const COM_DELAYED_INSERT: u8 = 0x10;
pub const COM_CHANGE_USER: u8 = 0x11;
pub const COM_BINLOG_DUMP: u8 = 0x12;
pub const COM_TABLE_DUMP: u8 = 0x13;
pub const COM_CONNECT_OUT: u8 = 0x14;
pub const COM_REGISTER_SLAVE: u8 = 0x15;
pub const COM_STMT_PREPARE: u8 = 0x16;
pub const COM_STMT_EXECUTE: u8 = 0x17;
pub const COM_STMT_SEND_LONG_DATA: u8 = 0x18;
pub const COM_STMT_CLOSE: u8 = 0x19;
pub const COM_STMT_RESET: u8 = 0x1a;
pub const COM_SET_OPTION: u8 = 0x1b;
pub const COM_STMT_FETCH: u8 = 0x1c;
pub const COM_DAEMON: u8 = 0x1d;
pub const COM_BINLOG_DUMP_GTID: u8 = 0x1e;
pub const COM_RESET_CONNECTION: u8 = 0x1f;

// COM_SET_OPTION values.
pub const MYSQL_OPTION_MULTI_STATEMENTS_ON: u16 = 0;
pub const MYSQL_OPTION_MULTI_STATEMENTS_OFF: u16 = 1;

// COM_STMT_EXECUTE cursor flags.
pub const CURSOR_TYPE_NO_CURSOR: u8 = 0;
pub const CURSOR_TYPE_READ_ONLY: u8 = 1;
pub const CURSOR_TYPE_FOR_UPDATE: u8 = 2;
pub const CURSOR_TYPE_SCROLLABLE: u8 = 4;

// Collation ids (column definitions, greeting, handshake response).
pub const CHARSET_UTF8_GENERAL_CI: u8 = 33;
pub const CHARSET_UTF8MB4_GENERAL_CI: u8 = 45;
pub const CHARSET_BINARY: u8 = 63;
pub const CHARSET_UTF8MB4_BIN: u8 = 46;
pub const CHARSET_UTF8MB4_UNICODE_CI: u8 = 224;
pub const CHARSET_UTF8MB4_0900_AI_CI: u8 = 255;

// Auth plugin names.
pub const MYSQL_NATIVE_PASSWORD: &str = "mysql_native_password";
pub const CACHING_SHA2_PASSWORD: &str = "caching_sha2_password";
